// A reader of provider catalogs as Crush reads them, for the agreement test
// (tests/it/go_agreement.rs): Go's encoding/json into the catwalk structs
// (their shapes and field tags, pkg/catwalk/provider.go), then, per
// provider, the effective endpoint, key reference and headers, the
// variables they refer to, and the place (scheme, host, port) Go's
// net/url makes of the endpoint. Standard library only.
//
//	go run main.go CATALOG.json
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
	Place     string            `json:"place"`
	Models    int               `json:"models"`
}

// expansion is a value split as the resolver expands it: literal text, and
// for each expansion the variables its text may come from.
type expansion struct {
	parts []string
	vars  [][]string
}

// expand reads a value as a here-document body: $NAME, ${NAME} and
// ${NAME:-word}-style defaults (word read the same way), backslash escapes
// of $, `, \ and newline. Anything else the resolver would do more with is
// reported; the catalogs given to this program were accepted by the
// project, which refuses those.
func expand(value string) (expansion, error) {
	var e expansion
	var text strings.Builder
	rest, err := word(value, false, &e, &text)
	if err != nil {
		return e, err
	}
	if rest != "" {
		return e, fmt.Errorf("stray %q", rest)
	}
	e.parts = append(e.parts, text.String())
	return e, nil
}

func isNameStart(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func isNameChar(c byte) bool { return isNameStart(c) || (c >= '0' && c <= '9') }

// word reads up to the end, or to the `}` closing a ${...} (left unread),
// adding literal text to text and each expansion to e. It returns what is
// left unread.
func word(s string, inBraces bool, e *expansion, text *strings.Builder) (string, error) {
	for len(s) > 0 {
		c := s[0]
		switch {
		case c == '}' && inBraces:
			return s, nil
		case c == '`':
			return s, fmt.Errorf("command substitution")
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
				return s, fmt.Errorf("unsupported ${")
			}
			vars := []string{s[:i]}
			s = s[i:]
			if strings.HasPrefix(s, ":-") || strings.HasPrefix(s, ":+") || strings.HasPrefix(s, ":?") {
				s = s[2:]
			} else if len(s) > 0 && (s[0] == '-' || s[0] == '+' || s[0] == '?') {
				s = s[1:]
			} else if !strings.HasPrefix(s, "}") {
				return s, fmt.Errorf("unsupported ${%s", vars[0])
			}
			var inner expansion
			var ignored strings.Builder
			rest, err := word(s, true, &inner, &ignored)
			if err != nil {
				return rest, err
			}
			if !strings.HasPrefix(rest, "}") {
				return rest, fmt.Errorf("unclosed ${")
			}
			for _, v := range inner.vars {
				vars = append(vars, v...)
			}
			s = rest[1:]
			e.parts = append(e.parts, text.String())
			text.Reset()
			e.vars = append(e.vars, vars)
		case c == '$' && len(s) > 1 && isNameStart(s[1]):
			i := 1
			for i < len(s) && isNameChar(s[i]) {
				i++
			}
			e.parts = append(e.parts, text.String())
			text.Reset()
			e.vars = append(e.vars, []string{s[1:i]})
			s = s[i:]
		default:
			text.WriteByte(c)
			s = s[1:]
		}
	}
	return s, nil
}

const marker = "zvarz"

// place is where Go's HTTP stack sends a request to endpoint: "default"
// without one, "scheme://host:port" when the endpoint fixes it, else
// "written:" and the endpoint as written (a variable decides the
// destination, or net/url refuses the endpoint).
func place(endpoint string, e expansion) string {
	if endpoint == "" {
		return "default"
	}
	written := "written:" + endpoint
	var marked strings.Builder
	for i, part := range e.parts {
		marked.WriteString(part)
		if i < len(e.vars) {
			marked.WriteString(marker)
		}
	}
	u, err := url.Parse(marked.String())
	if err != nil || u.Host == "" || strings.Contains(u.Scheme, marker) || strings.Contains(u.Host, marker) {
		return written
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
	out := json.NewEncoder(os.Stdout)
	var providers []Provider
	if err := json.Unmarshal(data, &providers); err != nil {
		out.Encode(map[string]string{"error": err.Error()})
		return
	}
	views := []view{}
	for _, p := range providers {
		v := view{ID: p.ID, APIKey: p.APIKey, Endpoint: p.APIEndpoint, Headers: p.DefaultHeaders, Models: len(p.Models)}
		if v.Headers == nil {
			v.Headers = map[string]string{}
		}
		seen := map[string]bool{}
		values := []string{p.APIKey, p.APIEndpoint}
		for _, h := range p.DefaultHeaders {
			values = append(values, h)
		}
		var endpoint expansion
		for i, value := range values {
			e, err := expand(value)
			if err != nil {
				out.Encode(map[string]string{"error": fmt.Sprintf("%s: %q: %v", p.ID, value, err)})
				return
			}
			if i == 1 {
				endpoint = e
			}
			for _, vars := range e.vars {
				for _, name := range vars {
					seen[name] = true
				}
			}
		}
		for name := range seen {
			v.Variables = append(v.Variables, name)
		}
		sort.Strings(v.Variables)
		if v.Variables == nil {
			v.Variables = []string{}
		}
		v.Place = place(p.APIEndpoint, endpoint)
		views = append(views, v)
	}
	out.Encode(map[string]any{"providers": views})
}
