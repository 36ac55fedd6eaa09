package canonjson

import "testing"

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		`{ "b": 1, "a": [ 1.50, "x<y&z" ] }`: `{"a":[1.50,"x<y&z"],"b":1}`,
		`"é"`:                                `"é"`,
		`{"z":{"d":null,"c":true}}`:          `{"z":{"c":true,"d":null}}`,
	} {
		got, err := Canonical([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("Canonical(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := Canonical([]byte(`1 2`)); err == nil {
		t.Error("two values: want an error")
	}
}
