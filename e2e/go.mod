module github.com/synaxi/synaxi/e2e

go 1.26.0

require github.com/synaxi/synaxi/internal v0.0.0

require (
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/tidwall/gjson v1.20.2 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.3.0 // indirect
	github.com/tidwall/sjson v1.2.9 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace github.com/synaxi/synaxi/internal => ../internal
