package config

import (
	"fmt"
	"net/url"
)

// ValidateWebhookURL checks a webhook URL: absolute http or https with a host,
// no credentials, no fragment.
func ValidateWebhookURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("is required (an https:// URL that accepts POST)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", raw, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("%q must start with https:// (or http://)", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", raw)
	}
	if u.User != nil {
		return fmt.Errorf("%q must not carry credentials: events are authenticated by their signature", raw)
	}
	if u.Fragment != "" {
		return fmt.Errorf("%q must not have a #fragment", raw)
	}
	return nil
}
