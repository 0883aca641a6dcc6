module github.com/synaxi/synaxi/installer

go 1.26.0

require github.com/synaxi/synaxi/internal v0.0.0

replace github.com/synaxi/synaxi/internal => ../internal
