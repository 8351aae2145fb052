// Reads Crush configuration with Crush v0.90's own code paths and the
// modules it pins (go.mod), and prints what it read as JSON:
//
//	go_config options FILE...  the JSON config files merged as Crush's
//	                           loadFromBytes merges them (go-jsons'
//	                           jsons.Merge), then decoded with
//	                           encoding/json into the options this project
//	                           reads (the fields of Crush's config.Options,
//	                           tagged as Crush tags them); or the error.
//	go_config dotenv FILE      a .env file read by godotenv (what Crush's
//	                           godotenv/autoload loads): each name and its
//	                           value's bytes in hex; or the error.
package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"github.com/joho/godotenv"
	"github.com/qjebbs/go-jsons"
)

type options struct {
	DataDirectory             string `json:"data_directory,omitempty"`
	DisableProviderAutoUpdate bool   `json:"disable_provider_auto_update,omitempty"`
	DisableDefaultProviders   bool   `json:"disable_default_providers,omitempty"`
}

type config struct {
	Options *options `json:"options,omitempty"`
}

func main() {
	out := map[string]any{}
	switch {
	case len(os.Args) >= 3 && os.Args[1] == "options":
		readOptions(os.Args[2:], out)
	case len(os.Args) == 3 && os.Args[1] == "dotenv":
		readDotenv(os.Args[2], out)
	default:
		fmt.Fprintln(os.Stderr, "usage: go_config options FILE... | go_config dotenv FILE")
		os.Exit(2)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(2)
	}
}

// readOptions follows Crush's loadFromConfigPaths (empty files skipped,
// invalid JSON refused) and loadFromBytes.
func readOptions(files []string, out map[string]any) {
	var configs [][]byte
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if len(data) == 0 {
			continue
		}
		if !json.Valid(data) {
			out["error"] = "invalid JSON in config file " + file
			return
		}
		configs = append(configs, data)
	}
	var c config
	if len(configs) > 0 {
		data, err := jsons.Merge(configs)
		if err != nil {
			out["error"] = err.Error()
			return
		}
		if err := json.Unmarshal(data, &c); err != nil {
			out["error"] = err.Error()
			return
		}
	}
	if c.Options != nil {
		out["disable_provider_auto_update"] = c.Options.DisableProviderAutoUpdate
		out["disable_default_providers"] = c.Options.DisableDefaultProviders
		out["data_directory"] = c.Options.DataDirectory
	}
}

func readDotenv(file string, out map[string]any) {
	vars, err := godotenv.Read(file)
	if err != nil {
		out["error"] = err.Error()
		return
	}
	shown := map[string]string{}
	for name, value := range vars {
		shown[name] = hex.EncodeToString([]byte(value))
	}
	out["vars"] = shown
}
