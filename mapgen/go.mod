module github.com/synaxi/synaxi/mapgen

go 1.26.0
