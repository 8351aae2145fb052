module crush-providers.test/go_config

go 1.18

require (
	github.com/joho/godotenv v1.5.1
	github.com/qjebbs/go-jsons v1.0.0-alpha.6
)
