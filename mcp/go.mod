module github.com/synaxi/synaxi/mcp

go 1.26.0

require github.com/synaxi/synaxi/internal v0.0.0

replace github.com/synaxi/synaxi/internal => ../internal

require github.com/synaxi/synaxi/mapgen v0.0.0

require (
	github.com/mark3labs/mcp-go v0.58.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
)

replace github.com/synaxi/synaxi/mapgen => ../mapgen
