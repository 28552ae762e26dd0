package contract_test

import "testing"

func BenchmarkValidate_Triage(b *testing.B) {
	val := loadExample(b, "triage")
	b.ReportAllocs()
	b.SetBytes(int64(len(triageOK)))
	for b.Loop() {
		if _, vs := val.Validate(triageOK); vs != nil {
			b.Fatal(vs)
		}
	}
}

func BenchmarkValidate_Invoice(b *testing.B) {
	val := loadExample(b, "invoice")
	b.ReportAllocs()
	b.SetBytes(int64(len(invoiceOK)))
	for b.Loop() {
		if _, vs := val.Validate(invoiceOK); vs != nil {
			b.Fatal(vs)
		}
	}
}
