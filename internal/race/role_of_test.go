package race_test

import (
	"testing"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A target's gating role is its place in the route: the first is the
// primary, every other one a fallback, whatever order attempts start in.
func TestRoleOfIsTheTargetsPlaceInTheRoute(t *testing.T) {
	targets := []string{"a", "b", "c"}
	for target, want := range map[string]string{"a": store.RolePrimary, "b": store.RoleFailover, "c": store.RoleFailover, "z": store.RoleFailover} {
		if got := race.RoleOf(targets, target); got != want {
			t.Errorf("RoleOf(%v, %q) = %q, want %q", targets, target, got, want)
		}
	}
	if got := race.RoleOf(nil, "a"); got != store.RoleFailover {
		t.Errorf("RoleOf of an empty route = %q, want %q", got, store.RoleFailover)
	}
}
