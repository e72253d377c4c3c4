package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// EnvPrefix starts every configuration environment variable.
const EnvPrefix = "REVIEWFLEET_"

// conventional environment variables that map onto config keys.
var conventionalEnv = map[string]string{
	"DATABASE_URL":          "database_url",
	"REDIS_URL":             "redis_url",
	"OPENAI_BASE_URL":       "llm.base_url",
	"OPENAI_API_KEY":        "llm.api_key",
	"OPENAI_MODEL":          "llm.model",
	"GITHUB_API_URL":        "github.api_url",
	"GITHUB_WEBHOOK_SECRET": "webhook.secret",
}

// Keys lists every configuration key as "section.key" (or "key" at the top
// level) with the environment variable that sets it, in declaration order.
func Keys() []Key {
	var keys []Key
	walk(reflect.ValueOf(Default()), "", func(path string, _ reflect.Value) {
		keys = append(keys, Key{Path: path, Env: EnvName(path)})
	})
	return keys
}

// Key is one configuration key.
type Key struct {
	Path string // e.g. "harness.eval_enabled"
	Env  string // e.g. "REVIEWFLEET_HARNESS_EVAL_ENABLED"
}

// EnvName is the environment variable for a key path.
func EnvName(path string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

// walk calls fn for every leaf field of a config struct, with its dotted path.
func walk(v reflect.Value, prefix string, fn func(path string, field reflect.Value)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			walk(f, path, fn)
			continue
		}
		fn(path, f)
	}
}

func applyEnv(cfg *Config, env func(string) (string, bool)) error {
	byPath := map[string]string{}
	for name, path := range conventionalEnv {
		if v, ok := env(name); ok && v != "" {
			byPath[path] = v
		}
	}
	var errs []string
	walk(reflect.ValueOf(cfg).Elem(), "", func(path string, f reflect.Value) {
		raw, ok := env(EnvName(path))
		if !ok {
			raw, ok = byPath[path]
		}
		if !ok {
			return
		}
		if err := setField(f, raw); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", EnvName(path), err))
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("bad environment configuration: %s", strings.Join(errs, "; "))
	}
	return nil
}

var durationType = reflect.TypeOf(time.Duration(0))

func setField(f reflect.Value, raw string) error {
	raw = strings.TrimSpace(raw)
	switch {
	case f.Type() == durationType:
		d, err := time.ParseDuration(raw)
		if err != nil {
			return fmt.Errorf("want a duration like 30s or 5m: %w", err)
		}
		f.SetInt(int64(d))
	case f.Kind() == reflect.String:
		f.SetString(raw)
	case f.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", raw)
		}
		f.SetBool(b)
	case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
		n, err := strconv.ParseInt(strings.ReplaceAll(raw, "_", ""), 10, 64)
		if err != nil {
			return fmt.Errorf("want an integer, got %q", raw)
		}
		f.SetInt(n)
	case f.Kind() == reflect.Float64:
		x, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return fmt.Errorf("want a number, got %q", raw)
		}
		f.SetFloat(x)
	case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
		var items []string
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
		f.Set(reflect.ValueOf(items))
	case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
		// A list of entries (scheduler.schedules) is given as YAML or JSON.
		v := reflect.New(f.Type())
		if err := yaml.Unmarshal([]byte(raw), v.Interface()); err != nil {
			return fmt.Errorf("want a YAML or JSON list: %w", err)
		}
		f.Set(v.Elem())
	case f.Kind() == reflect.Map && f.Type().Elem().Kind() == reflect.Struct:
		// A table of entries (llm.prices) is given as YAML or JSON.
		v := reflect.New(f.Type())
		if err := yaml.Unmarshal([]byte(raw), v.Interface()); err != nil {
			return fmt.Errorf("want a YAML or JSON map: %w", err)
		}
		f.Set(v.Elem())
	case f.Kind() == reflect.Map && f.Type().Elem().Kind() == reflect.Float64:
		m := map[string]float64{}
		for _, kv := range strings.Split(raw, ",") {
			if strings.TrimSpace(kv) == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("want key=value pairs separated by commas, got %q", kv)
			}
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return fmt.Errorf("value for %q: want a number, got %q", k, v)
			}
			m[strings.TrimSpace(k)] = x
		}
		f.Set(reflect.ValueOf(m))
	default:
		return fmt.Errorf("unsupported field kind %s", f.Kind())
	}
	return nil
}
