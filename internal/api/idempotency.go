package api

import (
	"net/http"
)

// maxKeyLen is the longest Idempotency-Key accepted (SPEC §4.4).
const maxKeyLen = 255

// idempotencyKey reads and checks the Idempotency-Key header: 1–255 printable
// ASCII characters.
func idempotencyKey(r *http.Request) (string, *problem) {
	vals := r.Header.Values("Idempotency-Key")
	bad := func(detail string) (string, *problem) {
		return "", &problem{Status: http.StatusBadRequest, Type: "invalid-idempotency-key", Title: "Invalid Idempotency-Key", Detail: detail}
	}
	if len(vals) == 0 {
		return bad("this endpoint requires an Idempotency-Key header: choose one value per intent (for example a UUID) and resend it on every retry of that intent")
	}
	if len(vals) > 1 {
		return bad("send exactly one Idempotency-Key header")
	}
	key := vals[0]
	if key == "" {
		return bad("the Idempotency-Key header is empty; it must be 1 to 255 printable ASCII characters")
	}
	if len(key) > maxKeyLen {
		return bad("the Idempotency-Key is longer than 255 characters")
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return bad("the Idempotency-Key must be printable ASCII (0x20–0x7E); it has a byte 0x" + hex2(key[i]) + " at position " + itoa(i))
		}
	}
	return key, nil
}

func hex2(b byte) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[b>>4], digits[b&0xF]})
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var buf []byte
	for ; i > 0; i /= 10 {
		buf = append([]byte{byte('0' + i%10)}, buf...)
	}
	return string(buf)
}
