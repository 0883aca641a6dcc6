module github.com/synaxi/synaxi/mcp

go 1.26.0

replace github.com/synaxi/synaxi/internal => ../internal

require (
	github.com/mark3labs/mcp-go v0.58.0
	github.com/stretchr/testify v1.12.1
	github.com/synaxi/synaxi/internal v0.0.0
	github.com/synaxi/synaxi/mapgen v0.0.0
)

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/go-git/gcfg v1.5.1-0.20230307220236-3a3c6141e376 // indirect
	github.com/go-git/go-billy/v5 v5.9.2 // indirect
	github.com/go-git/go-git/v5 v5.19.3 // indirect
	github.com/gofrs/flock v0.13.2 // indirect
	github.com/google/jsonschema-go v0.4.2 // indirect
	github.com/google/renameio/v2 v2.0.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jbenet/go-context v0.0.0-20150711004518-d14ea06fba99 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/smacker/go-tree-sitter v0.0.0-20240827094217-dd81d9e9be82 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/synaxi/synaxi/learning v0.0.0
	github.com/tidwall/gjson v1.20.2 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.3.0 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.57.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	gopkg.in/warnings.v0 v0.1.2 // indirect
)

replace github.com/synaxi/synaxi/mapgen => ../mapgen

replace github.com/synaxi/synaxi/learning => ../learning
