package config

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxOwnerLength is the longest owner (tenant) name, in bytes.
const MaxOwnerLength = 200

// ValidateOwner refuses an owner name that cannot serve as one: empty, over
// MaxOwnerLength bytes, not UTF-8, or holding white space or control
// characters. An owner names the tenant in `router keys list` (a column),
// in metrics labels (router_cost_usd_total{owner}) and in logs; a blank
// or tab-split name breaks all three, and a name with a leading or trailing
// space is a different tenant from the one the operator meant.
func ValidateOwner(owner string) error {
	switch {
	case owner == "":
		return fmt.Errorf("the owner is empty: name the tenant (for example acme)")
	case len(owner) > MaxOwnerLength:
		return fmt.Errorf("the owner is %d bytes long, more than %d: use a shorter tenant name", len(owner), MaxOwnerLength)
	case !utf8.ValidString(owner):
		return fmt.Errorf("the owner is not valid UTF-8")
	}
	for _, r := range owner {
		if unicode.IsSpace(r) || unicode.IsControl(r) || invisibleFormat(r) {
			return fmt.Errorf("the owner %q holds white space or a control character (%U): use a name without them (for example acme or acme-eu)", owner, r)
		}
	}
	return nil
}
