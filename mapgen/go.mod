module github.com/synaxi/synaxi/mapgen

go 1.26.0

require (
	github.com/stretchr/testify v1.12.1
	github.com/synaxi/synaxi/internal v0.0.0
	github.com/tree-sitter/go-tree-sitter v0.25.0
	github.com/tree-sitter/tree-sitter-python v0.23.6
)

require (
	github.com/mattn/go-pointer v0.0.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace github.com/synaxi/synaxi/internal => ../internal
