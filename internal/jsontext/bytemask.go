package jsontext

// Masks of the bytes of a little-endian word (eight bytes of text read at
// once): bit 7 of a byte of the mask is set where that byte of the word is
// what the mask names, and every other bit is clear. Each is exact for every
// byte: no carry crosses from one byte to the next.
const (
	byteOnes  = 0x0101010101010101
	allBytes  = 0x8080808080808080 // bit 7 of every byte
	byteLow7s = 0x7f7f7f7f7f7f7f7f
)

// digitBytes masks the bytes of w that are ASCII digits.
func digitBytes(w uint64) uint64 {
	t := w ^ 0x30*byteOnes // a digit is now 0..9
	// (t&0x7f)+0x76 reaches bit 7 for 10 and above; t's own bit 7 is a byte
	// of 0x80 or above.
	return ^(((t & byteLow7s) + 0x76*byteOnes) | t) & allBytes
}

// eBytes masks the bytes of w that are 'e' or 'E'.
func eBytes(w uint64) uint64 {
	y := (w | 0x20*byteOnes) ^ 0x65*byteOnes // 'e' and 'E' (and only they) are now 0
	return ^(((y & byteLow7s) + byteLow7s) | y) & allBytes
}
