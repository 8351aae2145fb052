// A reader of provider catalogs as Crush reads them, for the agreement test
// (tests/it/go_agreement.rs): Go's encoding/json into the catwalk structs
// (their shapes and field tags, pkg/catwalk/provider.go), then, per
// provider, the effective endpoint, key reference and headers, the
// variables they refer to, and, for each scenario of variable values, the
// place (scheme, host, port) Go's net/url sends a request to once the
// resolver has expanded the endpoint: its default and alternate words
// (${N:-w} and the others) included, so that the test can show what the
// forms the project refuses would do. Standard library only.
//
//	go run main.go CATALOG.json [SCENARIOS.json]
//
// prints one JSON object: {"providers": [...]} or {"error": "..."}.
package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
)

type ModelOptions struct {
	Temperature      *float64       `json:"temperature,omitempty"`
	TopP             *float64       `json:"top_p,omitempty"`
	TopK             *int64         `json:"top_k,omitempty"`
	FrequencyPenalty *float64       `json:"frequency_penalty,omitempty"`
	PresencePenalty  *float64       `json:"presence_penalty,omitempty"`
	ProviderOptions  map[string]any `json:"provider_options,omitempty"`
}

type Model struct {
	ID                     string       `json:"id"`
	Name                   string       `json:"name"`
	CostPer1MIn            float64      `json:"cost_per_1m_in"`
	CostPer1MOut           float64      `json:"cost_per_1m_out"`
	CostPer1MInCached      float64      `json:"cost_per_1m_in_cached"`
	CostPer1MOutCached     float64      `json:"cost_per_1m_out_cached"`
	ContextWindow          int64        `json:"context_window"`
	DefaultMaxTokens       int64        `json:"default_max_tokens"`
	CanReason              bool         `json:"can_reason"`
	ReasoningLevels        []string     `json:"reasoning_levels,omitempty"`
	DefaultReasoningEffort string       `json:"default_reasoning_effort,omitempty"`
	SupportsImages         bool         `json:"supports_attachments"`
	Options                ModelOptions `json:"options"`
}

type Provider struct {
	Name                string            `json:"name"`
	ID                  string            `json:"id"`
	APIKey              string            `json:"api_key,omitempty"`
	APIEndpoint         string            `json:"api_endpoint,omitempty"`
	Type                string            `json:"type,omitempty"`
	DefaultLargeModelID string            `json:"default_large_model_id,omitempty"`
	DefaultSmallModelID string            `json:"default_small_model_id,omitempty"`
	Models              []Model           `json:"models,omitempty"`
	DefaultHeaders      map[string]string `json:"default_headers,omitempty"`
}

type view struct {
	ID        string            `json:"id"`
	APIKey    string            `json:"api_key"`
	Endpoint  string            `json:"api_endpoint"`
	Headers   map[string]string `json:"headers"`
	Variables []string          `json:"variables"`
	Places    []string          `json:"places"`
	Models    int               `json:"models"`
}

// node is a value as the resolver reads it (a here-document body): text,
// and expansions of a variable, maybe with a word of their own.
type node struct {
	text string
	name string // "" for text
	op   string // "", ":-", "-", ":+", "+", ":?", "?"
	word []node
}

// parse reads a value: literal text (quotes included: they are text in a
// here-document), backslash escapes of $, `, \ and newline, $NAME,
// ${NAME} and the ${NAME:-word} family, whose word is read the same way.
// Anything else a $ or a backtick starts is an error.
func parse(s string, inBraces bool) ([]node, string, error) {
	var out []node
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, node{text: text.String()})
			text.Reset()
		}
	}
	for len(s) > 0 {
		c := s[0]
		switch {
		case c == '}' && inBraces:
			flush()
			return out, s, nil
		case c == '`':
			return nil, s, fmt.Errorf("command substitution")
		case c == '\\':
			if len(s) > 1 && (s[1] == '$' || s[1] == '`' || s[1] == '\\' || (inBraces && s[1] == '}')) {
				text.WriteByte(s[1])
				s = s[2:]
			} else if len(s) > 1 && s[1] == '\n' {
				s = s[2:]
			} else {
				text.WriteByte('\\')
				s = s[1:]
			}
		case c == '$' && len(s) > 1 && s[1] == '{':
			s = s[2:]
			i := 0
			for i < len(s) && isNameChar(s[i]) {
				i++
			}
			if i == 0 || !isNameStart(s[0]) {
				return nil, s, fmt.Errorf("unsupported ${")
			}
			n := node{name: s[:i]}
			s = s[i:]
			for _, op := range []string{":-", ":+", ":?", "-", "+", "?"} {
				if strings.HasPrefix(s, op) {
					n.op = op
					s = s[len(op):]
					break
				}
			}
			if n.op == "" && !strings.HasPrefix(s, "}") {
				return nil, s, fmt.Errorf("unsupported ${%s", n.name)
			}
			if n.op != "" {
				word, rest, err := parse(s, true)
				if err != nil {
					return nil, rest, err
				}
				n.word, s = word, rest
			}
			if !strings.HasPrefix(s, "}") {
				return nil, s, fmt.Errorf("unclosed ${")
			}
			s = s[1:]
			flush()
			out = append(out, n)
		case c == '$' && len(s) > 1 && isNameStart(s[1]):
			i := 1
			for i < len(s) && isNameChar(s[i]) {
				i++
			}
			flush()
			out = append(out, node{name: s[1:i]})
			s = s[i:]
		case c == '$' && len(s) > 1 && (s[1] == '(' || (s[1] >= '0' && s[1] <= '9') || strings.IndexByte("@*#?$!-'\"[", s[1]) >= 0):
			return nil, s, fmt.Errorf("unsupported $%c", s[1])
		default:
			text.WriteByte(c)
			s = s[1:]
		}
	}
	flush()
	return out, s, nil
}

func isNameStart(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func isNameChar(c byte) bool { return isNameStart(c) || (c >= '0' && c <= '9') }

// names adds every variable the nodes may take text from.
func names(nodes []node, seen map[string]bool) {
	for _, n := range nodes {
		if n.name != "" {
			seen[n.name] = true
			names(n.word, seen)
		}
	}
}

// expand makes the value the resolver makes of nodes, in env (a missing
// name is unset); an error for ${N:?w} and ${N?w} when they fail.
func expand(nodes []node, env map[string]*string) (string, error) {
	var out strings.Builder
	for _, n := range nodes {
		if n.name == "" {
			out.WriteString(n.text)
			continue
		}
		value, set := env[n.name]
		v := ""
		if set && value != nil {
			v = *value
		} else {
			set = false
		}
		word := func() (string, error) { return expand(n.word, env) }
		switch n.op {
		case "":
			out.WriteString(v)
		case ":-", "-":
			if (n.op == ":-" && v == "") || (n.op == "-" && !set) {
				w, err := word()
				if err != nil {
					return "", err
				}
				out.WriteString(w)
			} else {
				out.WriteString(v)
			}
		case ":+", "+":
			if (n.op == ":+" && v != "") || (n.op == "+" && set) {
				w, err := word()
				if err != nil {
					return "", err
				}
				out.WriteString(w)
			}
		case ":?", "?":
			if (n.op == ":?" && v == "") || (n.op == "?" && !set) {
				return "", fmt.Errorf("%s: unset", n.name)
			}
			out.WriteString(v)
		}
	}
	return out.String(), nil
}

// place is where Go's HTTP stack sends a request to endpoint, expanded:
// "default" when it is empty (the provider type's default), else
// "scheme://host:port" as net/url splits it, "nohost" for a URL without
// a host, "error" where net/url (or the resolver) refuses it: no request.
func place(endpoint string, err error) string {
	if err != nil {
		return "error"
	}
	if endpoint == "" {
		return "default"
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "error"
	}
	if u.Host == "" {
		return "nohost"
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return u.Scheme + "://" + host + ":" + port
}

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// Each scenario gives every variable one value ("*"), or leaves them
	// unset (null): hostile values, for where they send a request.
	var scenarios []map[string]*string
	if len(os.Args) > 2 {
		raw, err := os.ReadFile(os.Args[2])
		if err == nil {
			err = json.Unmarshal(raw, &scenarios)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	out := json.NewEncoder(os.Stdout)
	var providers []Provider
	if err := json.Unmarshal(data, &providers); err != nil {
		out.Encode(map[string]string{"error": err.Error()})
		return
	}
	views := []view{}
	for _, p := range providers {
		v := view{ID: p.ID, APIKey: p.APIKey, Endpoint: p.APIEndpoint, Headers: p.DefaultHeaders, Models: len(p.Models), Places: []string{}}
		if v.Headers == nil {
			v.Headers = map[string]string{}
		}
		seen := map[string]bool{}
		values := []string{p.APIKey, p.APIEndpoint}
		for _, h := range p.DefaultHeaders {
			values = append(values, h)
		}
		var endpoint []node
		for i, value := range values {
			nodes, _, err := parse(value, false)
			if err != nil {
				out.Encode(map[string]string{"error": fmt.Sprintf("%s: %q: %v", p.ID, value, err)})
				return
			}
			if i == 1 {
				endpoint = nodes
			}
			names(nodes, seen)
		}
		v.Variables = []string{}
		for name := range seen {
			v.Variables = append(v.Variables, name)
		}
		sort.Strings(v.Variables)
		for _, scenario := range scenarios {
			env := map[string]*string{}
			for _, name := range v.Variables {
				if value, ok := scenario[name]; ok {
					env[name] = value
				} else {
					env[name] = scenario["*"]
				}
			}
			v.Places = append(v.Places, place(expand(endpoint, env)))
		}
		views = append(views, v)
	}
	out.Encode(map[string]any{"providers": views})
}
