// Decodes a Crush JSON config with Go's encoding/json into the options
// this project reads (the fields of Crush's `config.Options`, tagged as
// Crush tags them), and prints them, or the decode error, as JSON.
package main

import (
	"encoding/json"
	"fmt"
	"os"
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
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var c config
	out := map[string]any{}
	if err := json.Unmarshal(data, &c); err != nil {
		out["error"] = err.Error()
	} else if c.Options != nil {
		out["disable_provider_auto_update"] = c.Options.DisableProviderAutoUpdate
		out["disable_default_providers"] = c.Options.DisableDefaultProviders
		out["data_directory"] = c.Options.DataDirectory
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(2)
	}
}
