module github.com/synaxi/synaxi/installer

go 1.26.0

require github.com/synaxi/synaxi/internal v0.0.0

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/google/renameio/v2 v2.0.2 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/tidwall/gjson v1.20.2 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.3.0 // indirect
	github.com/tidwall/sjson v1.2.9 // indirect
)

replace github.com/synaxi/synaxi/internal => ../internal
