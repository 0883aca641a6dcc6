module github.com/synaxi/synaxi/mapgen

go 1.26.0

require github.com/stretchr/testify v1.12.1 // indirect
