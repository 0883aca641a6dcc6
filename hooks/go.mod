module github.com/synaxi/synaxi/hooks

go 1.26.0

require (
	github.com/stretchr/testify v1.12.1
	github.com/synaxi/synaxi/internal v0.0.0
	mvdan.cc/sh/v3 v3.14.1
)

require github.com/gofrs/flock v0.13.2 // indirect

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/google/renameio/v2 v2.0.2
	github.com/synaxi/synaxi/learning v0.0.0
	github.com/tidwall/gjson v1.20.2
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/mod v0.38.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/synaxi/synaxi/internal => ../internal

replace github.com/synaxi/synaxi/learning => ../learning
