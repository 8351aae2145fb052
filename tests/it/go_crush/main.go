// A stand-in for Crush v0.90's start-up, as far as the provider catalog
// and Hyper's provider go: the end-to-end tests start it through the front
// and read what it did from the report it writes. Its behaviour follows
// Crush's internal/config (catwalk.go, hyper.go, provider.go at v0.90.0);
// the code is ours. The catalog's types, client and embedded copy are
// Catwalk's own module, at the version Crush v0.90 uses.
//
// Environment:
//
//	STANDIN_VERSION  what `--version` says (default 0.90.0), and which
//	                 start-up it emulates: a release from 0.91.0 on reads
//	                 the cache with its updates off, any other its
//	                 embedded catalog
//	STANDIN_CONFIG_OFF=1  a config file turned updates off (Crush's own
//	                 reading of its files is not emulated)
//	STANDIN_LOG      the folder of numbered report folders (required)
//	STANDIN_RUN      a command to run with `/bin/sh -c`, as Crush's tools
//	                 do (the environment, PATH included, inherited)
//	HYPER_URL        Hyper's base URL (required: never the real one)
//
// `--version` (or `-v`) prints `crush version $STANDIN_VERSION` and
// writes no report. Any other start writes STANDIN_LOG/N/report.json, N
// the first free number:
//
//	version, args, autoupdate  as decided
//	env          CATWALK_URL, CRUSH_DISABLE_PROVIDER_AUTO_UPDATE,
//	             CRUSH_PROVIDER_FRONT, HYPER_URL: the value, or null if unset
//	catalog      source (cache, embedded or fetched), sha256 (of the cache
//	             bytes used, or of the bytes stored; null for embedded),
//	             providers (the ids it ended with), cache_error, store_error
//	requests     each request attempted, in order: kind (catwalk, hyper),
//	             url, status or error, if_none_match, authorized
//	hyper        source (cache, embedded or fetched), models, store_error
//	run          STANDIN_RUN's command, exit_code, stdout, stderr (null
//	             without one)
package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"charm.land/catwalk/pkg/catwalk"
	"charm.land/catwalk/pkg/embedded"
)

// The bound of every request: far below Crush's 45 s, so that a test
// that goes wrong ends soon.
const requestTimeout = 10 * time.Second

const defaultCatwalkURL = "https://catwalk.charm.land"

// The variables the report shows, as the stand-in saw them.
var shownEnv = []string{
	"CATWALK_URL",
	"CRUSH_DISABLE_PROVIDER_AUTO_UPDATE",
	"CRUSH_PROVIDER_FRONT",
	"HYPER_URL",
}

type request struct {
	Kind        string `json:"kind"`
	URL         string `json:"url"`
	Status      int    `json:"status,omitempty"`
	Error       string `json:"error,omitempty"`
	IfNoneMatch string `json:"if_none_match,omitempty"`
	Authorized  bool   `json:"authorized"`
}

type catalogReport struct {
	// cache, embedded or fetched.
	Source string `json:"source"`
	// The SHA-256 of the cache bytes used (source cache), or of the bytes
	// stored (fetched); null for the embedded catalog.
	SHA256 *string `json:"sha256"`
	// Why the cache was not used, when it was not.
	CacheError string   `json:"cache_error,omitempty"`
	StoreError string   `json:"store_error,omitempty"`
	Providers  []string `json:"providers"`
}

type hyperReport struct {
	Source     string `json:"source"`
	Models     int    `json:"models"`
	StoreError string `json:"store_error,omitempty"`
}

type runReport struct {
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	Error    string `json:"error,omitempty"`
}

type report struct {
	Version    string             `json:"version"`
	Args       []string           `json:"args"`
	Autoupdate bool               `json:"autoupdate"`
	Env        map[string]*string `json:"env"`
	Catalog    catalogReport      `json:"catalog"`
	Requests   []request          `json:"requests"`
	Hyper      hyperReport        `json:"hyper"`
	Run        *runReport         `json:"run"`
}

// recorder sees every request the process makes (the Catwalk client and
// the Hyper request both use the default transport) and notes it.
type recorder struct {
	next http.RoundTripper
	kind string
	mu   sync.Mutex
	seen []request
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	note := request{
		Kind:        r.kind,
		URL:         req.URL.String(),
		IfNoneMatch: req.Header.Get("If-None-Match"),
		Authorized:  req.Header.Get("Authorization") != "",
	}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		note.Error = err.Error()
	} else {
		note.Status = resp.StatusCode
	}
	r.mu.Lock()
	r.seen = append(r.seen, note)
	r.mu.Unlock()
	return resp, err
}

// call runs one request of `kind`; when it failed before reaching the
// transport (a URL that makes no request), it is noted all the same.
func (r *recorder) call(kind, url string, do func() error) error {
	r.mu.Lock()
	r.kind = kind
	before := len(r.seen)
	r.mu.Unlock()
	err := do()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seen) == before && err != nil {
		r.seen = append(r.seen, request{Kind: kind, URL: url, Error: err.Error()})
	}
	return err
}

func main() {
	version := cmp.Or(os.Getenv("STANDIN_VERSION"), "0.90.0")
	if len(os.Args) > 1 && (os.Args[1] == "--version" || os.Args[1] == "-v") {
		fmt.Printf("crush version %s\n", version)
		return
	}
	logDir := os.Getenv("STANDIN_LOG")
	if info, err := os.Stat(logDir); logDir == "" || err != nil || !info.IsDir() {
		fmt.Fprintln(os.Stderr, "go_crush: STANDIN_LOG must name a folder")
		os.Exit(99)
	}
	hyperURL := os.Getenv("HYPER_URL")
	if hyperURL == "" {
		fmt.Fprintln(os.Stderr, "go_crush: HYPER_URL must be set, so that Hyper's real service is never asked")
		os.Exit(99)
	}

	rec := &recorder{next: http.DefaultTransport}
	http.DefaultTransport = rec

	out := report{
		Version:    version,
		Args:       os.Args[1:],
		Autoupdate: autoupdate(),
		Env:        map[string]*string{},
	}
	for _, name := range shownEnv {
		if value, ok := os.LookupEnv(name); ok {
			out.Env[name] = &value
		} else {
			out.Env[name] = nil
		}
	}
	dataDir := dataDir()
	out.Catalog = catalog(rec, dataDir, out.Autoupdate, readsCacheWhenOff(version))
	out.Hyper = hyperProvider(rec, dataDir, hyperURL, out.Autoupdate)
	out.Requests = rec.seen
	if out.Requests == nil {
		out.Requests = []request{}
	}
	if command := os.Getenv("STANDIN_RUN"); command != "" {
		out.Run = run(command)
	}
	if err := write(logDir, out); err != nil {
		fmt.Fprintln(os.Stderr, "go_crush: cannot write the report:", err)
		os.Exit(98)
	}
}

// autoupdate is Crush's `!cfg.Options.DisableProviderAutoUpdate`: the
// variable, when set, replaces what the config says (a value ParseBool
// does not read counts as false: updates on).
func autoupdate() bool {
	if value, ok := os.LookupEnv("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE"); ok {
		off, _ := strconv.ParseBool(value)
		return !off
	}
	return os.Getenv("STANDIN_CONFIG_OFF") != "1"
}

// readsCacheWhenOff: releases from 0.91.0 on read providers.json with
// their updates off; v0.90.x, pre-releases and unknown builds use their
// embedded catalog.
func readsCacheWhenOff(version string) bool {
	v := strings.TrimPrefix(version, "v")
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return false
	}
	var n [3]int
	for i, part := range parts {
		value, err := strconv.Atoi(part)
		// Atoi takes a sign; a release's numbers have none.
		if err != nil || value < 0 || strings.HasPrefix(part, "+") {
			return false
		}
		n[i] = value
	}
	return n[0] > 0 || n[1] >= 91
}

// dataDir is Crush's on Linux and macOS.
func dataDir() string {
	if xdg := os.Getenv("XDG_DATA_HOME"); xdg != "" {
		return filepath.Join(xdg, "crush")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".local", "share", "crush")
}

func digest(data []byte) *string {
	sum := sha256.Sum256(data)
	text := hex.EncodeToString(sum[:])
	return &text
}

func ids(providers []catwalk.Provider) []string {
	out := make([]string, 0, len(providers))
	for _, p := range providers {
		out = append(out, string(p.ID))
	}
	return out
}

// readCache is Crush's cache.Get: the decoded catalog, its ETag and its
// bytes, or why it could not be used.
func readCache(path string) ([]catwalk.Provider, string, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", nil, err
	}
	var providers []catwalk.Provider
	if err := json.Unmarshal(data, &providers); err != nil {
		return nil, "", data, err
	}
	return providers, catwalk.Etag(data), data, nil
}

func catalog(rec *recorder, dir string, autoupdate, readsCache bool) catalogReport {
	path := filepath.Join(dir, "providers.json")
	embeddedReport := func(why string) catalogReport {
		return catalogReport{Source: "embedded", CacheError: why, Providers: ids(embedded.GetAll())}
	}
	cached, etag, data, err := readCache(path)
	usable := err == nil && len(cached) > 0
	why := ""
	switch {
	case err != nil:
		why = err.Error()
	case len(cached) == 0:
		why = "the cache holds no provider"
	}
	if !autoupdate {
		if readsCache && usable {
			return catalogReport{Source: "cache", SHA256: digest(data), Providers: ids(cached)}
		}
		if !readsCache {
			why = "this version uses its embedded catalog while its updates are off"
		}
		return embeddedReport(why)
	}
	fallback := embeddedReport(why)
	if usable {
		fallback = catalogReport{Source: "cache", SHA256: digest(data), Providers: ids(cached)}
	}
	base := cmp.Or(os.Getenv("CATWALK_URL"), defaultCatwalkURL)
	var result []catwalk.Provider
	err = rec.call("catwalk", base+"/v2/providers", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		var err error
		result, err = catwalk.NewWithURL(base).GetProviders(ctx, etag)
		return err
	})
	// Any error (a timeout, 304, no request at all) and an empty list keep
	// what was read, writing nothing.
	if err != nil || len(result) == 0 {
		return fallback
	}
	stored, storeErr := store(path, result)
	out := catalogReport{Source: "fetched", Providers: ids(result)}
	if storeErr != nil {
		out.StoreError = storeErr.Error()
	} else {
		out.SHA256 = digest(stored)
	}
	return out
}

func hyperProvider(rec *recorder, dir, base string, autoupdate bool) hyperReport {
	if !autoupdate {
		return hyperReport{Source: "embedded"}
	}
	path := filepath.Join(dir, "hyper.json")
	out := hyperReport{Source: "embedded"}
	etag := ""
	if data, err := os.ReadFile(path); err == nil {
		var cached catwalk.Provider
		if json.Unmarshal(data, &cached) == nil {
			etag = catwalk.Etag(data)
			if cached.ID != "" {
				out = hyperReport{Source: "cache", Models: len(cached.Models)}
			}
		}
	}
	var fetched catwalk.Provider
	url := base + "/api/v1/provider"
	err := rec.call("hyper", url, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if etag != "" {
			req.Header.Set("If-None-Match", `"`+etag+`"`)
		}
		if key := os.Getenv("HYPER_API_KEY"); key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := (&http.Client{Timeout: requestTimeout}).Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close() //nolint:errcheck
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return json.NewDecoder(resp.Body).Decode(&fetched)
	})
	if err != nil || len(fetched.Models) == 0 {
		return out
	}
	out = hyperReport{Source: "fetched", Models: len(fetched.Models)}
	if _, err := store(path, fetched); err != nil {
		out.StoreError = err.Error()
	}
	return out
}

// store writes v as JSON through a temporary file renamed into place, as
// Crush does; it returns the bytes written.
func store(path string, v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return data, atomicWrite(path, data)
}

func atomicWrite(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	err = errors.Join(err, f.Chmod(0o644), f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp) //nolint:errcheck
	}
	return err
}

// run runs command as Crush's tools do: `sh -c`, the environment (PATH
// included) inherited.
func run(command string) *runReport {
	var stdout, stderr strings.Builder
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	out := &runReport{Command: command}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		out.ExitCode = exit.ExitCode()
	case err != nil:
		out.ExitCode = -1
		out.Error = err.Error()
	}
	out.Stdout = stdout.String()
	out.Stderr = stderr.String()
	return out
}

// write puts the report in the next free numbered folder of logDir, as
// report.json, renamed into place so that no reader sees half of it.
func write(logDir string, out report) error {
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	for n := 0; ; n++ {
		dir := filepath.Join(logDir, strconv.Itoa(n))
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		tmp := filepath.Join(dir, ".report.json")
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, filepath.Join(dir, "report.json"))
	}
}
