package contract

import (
	"fmt"
	"sort"
	"sync"
)

// RuleFunc is a Go business rule. doc is the output decoded with json.Number for
// numbers (map[string]any, []any, string, json.Number, bool, nil). It returns one
// Violation per problem; Rule is always reported as "custom:<name>" and an empty
// Path as "$".
type RuleFunc func(doc any) []Violation

var registry = struct {
	sync.RWMutex
	rules map[string]RuleFunc
}{rules: map[string]RuleFunc{}}

// Register adds a Go rule under name, for prompts to list in `rules.custom`. Call
// it from an init function: manifests are checked against the registry when they
// load. It panics on an empty name, a nil func or a name already registered.
func Register(name string, fn func(doc any) []Violation) {
	if name == "" {
		panic("contract.Register: empty rule name")
	}
	if fn == nil {
		panic(fmt.Sprintf("contract.Register: nil func for rule %q", name))
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.rules[name]; dup {
		panic(fmt.Sprintf("contract.Register: rule %q registered twice", name))
	}
	registry.rules[name] = fn
}

// Registered returns the names of all registered Go rules, sorted.
func Registered() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.rules))
	for n := range registry.rules {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func lookup(name string) (RuleFunc, bool) {
	registry.RLock()
	defer registry.RUnlock()
	fn, ok := registry.rules[name]
	return fn, ok
}
