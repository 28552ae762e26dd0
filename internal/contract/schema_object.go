package contract

// AdmitsObject reports whether a JSON object can match the schema as far as
// its root tells: false when the root (or a schema applying with it: beside a
// $ref, an allOf member) is the schema false or has a "type" without
// "object". A job's input is always an object: an input schema that admits
// none refuses every job.
func (s *Schema) AdmitsObject() bool {
	for _, r := range applying(s.schema) {
		if r.Always != nil && !*r.Always {
			return false
		}
	}
	return allows(applying(s.schema), "object")
}
