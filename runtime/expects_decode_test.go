package runtime

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

type answerFixture struct {
	OK    bool              `json:"ok"`
	N     uint8             `json:"n"`
	F     float64           `json:"f"`
	Tags  []string          `json:"tags"`
	Attrs map[string]int16  `json:"attrs"`
	When  time.Time         `json:"when"`
	Raw   []byte            `json:"raw"`
	Ptr   *int              `json:"ptr"`
	Any   any               `json:"any"`
	Skip  chan int          `json:"-"`
	Num   int               `json:"num,string"`
	Inner *answerFixture    `json:"inner"`
	Self  map[string]string `json:"self,omitempty"`
	Arr   [2]bool           `json:"arr"`
	answerEmbedded
}

type answerEmbedded struct {
	Deep string `json:"deep"`
}

func schemaFor(t *testing.T, ty reflect.Type) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(schemaOf(ty, ty, map[reflect.Type]bool{}))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestCheckAnswerAgreesWithDecoding: for each answer and type, checkAnswer
// accepts the answer exactly when encoding/json decodes it into the type.
func TestCheckAnswerAgreesWithDecoding(t *testing.T) {
	answers := []string{
		`true`, `"yes"`, `null`, `1`, `-1`, `1.5`, `1e3`, `{}`, `[]`, `[1,2,3]`,
		`{"ok":true,"n":255}`, `{"n":256}`, `{"n":-1}`, `{"n":1.0}`, `{"f":"1"}`, `{"f":1e300}`,
		`{"tags":["a",null]}`, `{"tags":"a"}`, `{"tags":null}`, `{"attrs":{"a":32767}}`, `{"attrs":{"a":32768}}`,
		`{"when":"2024-01-02T03:04:05Z"}`, `{"when":5}`, `{"raw":"aGk="}`, `{"raw":"!!"}`, `{"raw":null}`,
		`{"ptr":null}`, `{"ptr":"x"}`, `{"any":[1,{"a":null}]}`, `{"Skip":5}`, `{"inner":{"inner":{"ok":"x"}}}`,
		`{"inner":{"n":3}}`, `{"deep":"x"}`, `{"deep":1}`, `{"OK":false}`, `{"Ok":"no"}`, `{"unknown":[1]}`,
		`{"arr":[true,false,true]}`, `{"arr":[1]}`, `{"num":"12"}`, `{"self":{"a":1}}`,
		`{"1":true}`, `{"x":true}`,
	}
	types := []reflect.Type{
		reflect.TypeFor[bool](), reflect.TypeFor[string](), reflect.TypeFor[int](), reflect.TypeFor[int8](),
		reflect.TypeFor[uint](), reflect.TypeFor[float32](), reflect.TypeFor[[]int](), reflect.TypeFor[[2]string](),
		reflect.TypeFor[map[string]bool](), reflect.TypeFor[map[int]bool](), reflect.TypeFor[*bool](),
		reflect.TypeFor[answerFixture](), reflect.TypeFor[any](), reflect.TypeFor[[]byte](), reflect.TypeFor[time.Time](),
	}
	for _, ty := range types {
		schema := schemaFor(t, ty)
		for _, a := range answers {
			why := checkAnswer(schema, json.RawMessage(a))
			err := json.Unmarshal([]byte(a), reflect.New(ty).Interface())
			switch {
			case why == nil && err != nil:
				t.Errorf("%v: %s passes the schema %s but does not decode: %v", ty, a, schema, err)
			case why != nil && err == nil:
				t.Errorf("%v: %s decodes but the schema %s refuses it: %v", ty, a, schema, why)
			}
		}
	}
}

// FuzzCheckAnswer: an answer the schema of answerFixture accepts always
// decodes into it.
func FuzzCheckAnswer(f *testing.F) {
	for _, s := range []string{`{"ok":true}`, `{"n":300}`, `{"tags":["a"]}`, `{"inner":{"raw":"aGk="}}`, `[1]`, `"x"`, `{"arr":[true]}`} {
		f.Add(s)
	}
	raw, _ := json.Marshal(schemaOf(reflect.TypeFor[answerFixture](), reflect.TypeFor[answerFixture](), map[reflect.Type]bool{}))
	f.Fuzz(func(t *testing.T, a string) {
		if !json.Valid([]byte(a)) {
			return
		}
		if checkAnswer(raw, json.RawMessage(a)) == nil {
			var v answerFixture
			if err := json.Unmarshal([]byte(a), &v); err != nil {
				t.Fatalf("%s passes the schema but does not decode: %v", a, err)
			}
		}
	})
}
