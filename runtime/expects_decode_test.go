package runtime

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
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

func schemaJSON(t testing.TB, ty reflect.Type) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(schemaFor(ty))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

var (
	sampleAnswers = []string{
		`true`, `"yes"`, `null`, `1`, `-1`, `1.5`, `1e3`, `{}`, `[]`, `[1,2,3]`,
		`{"ok":true,"n":255}`, `{"n":256}`, `{"n":-1}`, `{"n":1.0}`, `{"f":"1"}`, `{"f":1e300}`,
		`{"tags":["a",null]}`, `{"tags":"a"}`, `{"tags":null}`, `{"attrs":{"a":32767}}`, `{"attrs":{"a":32768}}`,
		`{"when":"2024-01-02T03:04:05Z"}`, `{"when":5}`, `{"raw":"aGk="}`, `{"raw":"!!"}`, `{"raw":null}`,
		`{"ptr":null}`, `{"ptr":"x"}`, `{"any":[1,{"a":null}]}`, `{"Skip":5}`, `{"inner":{"inner":{"ok":"x"}}}`,
		`{"inner":{"n":3}}`, `{"deep":"x"}`, `{"deep":1}`, `{"OK":false}`, `{"Ok":"no"}`, `{"unknown":[1]}`,
		`{"arr":[true,false,true]}`, `{"arr":[1]}`, `{"num":"12"}`, `{"self":{"a":1}}`,
		`{"1":true}`, `{"x":true}`, `[true,null]`, `["a",null]`,
		`{"ok":true,"n":1,"f":1,"tags":[],"attrs":{},"when":"2024-01-02T03:04:05Z","raw":"aGk=","ptr":null,"any":null,"num":"1","inner":null,"arr":[true,false],"deep":"d"}`,
		`{"ok":true,"n":1,"f":1,"tags":null,"attrs":null,"when":"2024-01-02T03:04:05Z","raw":null,"ptr":3,"any":1,"num":"1","inner":{"ok":false,"n":0,"f":0,"tags":[],"attrs":{},"when":"2024-01-02T03:04:05Z","raw":"","ptr":null,"any":null,"num":"1","inner":null,"arr":[true,false],"deep":""},"arr":[true,false],"deep":"d"}`,
		`{"next":{"next":null,"label":"b"},"label":"a"}`, `{"next":{"label":"b"},"label":"a"}`, `{"next":{"next":null,"label":"b","x":1},"label":"a"}`,
	}
	sampleTypes = []reflect.Type{
		reflect.TypeFor[bool](), reflect.TypeFor[string](), reflect.TypeFor[int](), reflect.TypeFor[int8](),
		reflect.TypeFor[uint](), reflect.TypeFor[float32](), reflect.TypeFor[[]int](), reflect.TypeFor[[2]string](),
		reflect.TypeFor[map[string]bool](), reflect.TypeFor[map[int]bool](), reflect.TypeFor[*bool](),
		reflect.TypeFor[answerFixture](), reflect.TypeFor[any](), reflect.TypeFor[[]byte](), reflect.TypeFor[time.Time](),
		reflect.TypeFor[*answerFixture](), reflect.TypeFor[[]*bool](), reflect.TypeFor[answerList](), reflect.TypeFor[answerHolder](),
	}
)

// answerList refers to itself; answerHolder holds it, so its schema
// describes answerList under $defs.
type answerList struct {
	Next  *answerList `json:"next"`
	Label string      `json:"label"`
}

type answerHolder struct {
	List answerList `json:"list,omitempty"`
	OK   bool       `json:"ok,omitzero"`
}

// TestCheckAnswerDecodes: an answer checkAnswer accepts always decodes into
// the type (the check is never looser than encoding/json).
func TestCheckAnswerDecodes(t *testing.T) {
	for _, ty := range sampleTypes {
		schema := schemaJSON(t, ty)
		for _, a := range sampleAnswers {
			why := checkAnswer(schema, json.RawMessage(a))
			err := json.Unmarshal([]byte(a), reflect.New(ty).Interface())
			if why == nil && err != nil {
				t.Errorf("%v: %s passes the schema %s but does not decode: %v", ty, a, schema, err)
			}
		}
	}
}

// TestCheckAnswerAgreesWithValidator: for each answer and type, a JSON
// Schema validator (draft 2020-12, formats and content asserted) and
// checkAnswer give the same verdict, so a client that validates against
// the recorded schema and the node never disagree. The one departure: a
// schema cannot see how a number is written, so 1.0 passes the validator
// as an integer while the node refuses it.
func TestCheckAnswerAgreesWithValidator(t *testing.T) {
	for _, ty := range sampleTypes {
		schema := schemaJSON(t, ty)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		c.AssertContent()
		if err := c.AddResource("answer.json", doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile("answer.json")
		if err != nil {
			t.Fatalf("%v: the schema does not compile: %v\n%s", ty, err, schema)
		}
		for _, a := range sampleAnswers {
			why := checkAnswer(schema, json.RawMessage(a))
			v, _ := jsonschema.UnmarshalJSON(strings.NewReader(a))
			verr := sch.Validate(v)
			switch {
			case why == nil && verr != nil:
				t.Errorf("%v: checkAnswer accepts %s, the validator refuses it: %v", ty, a, verr)
			case why != nil && verr == nil && !strings.Contains(why.Error(), "want an integer"):
				t.Errorf("%v: the validator accepts %s, checkAnswer refuses it: %v", ty, a, why)
			}
		}
	}
}

// TestCheckAnswerStrict: null, a misspelt, case-folded or missing member
// never becomes a zero value; null is an answer only where the type is a
// pointer, slice, map or interface.
func TestCheckAnswerStrict(t *testing.T) {
	type decision struct {
		Approved bool   `json:"approved"`
		Page     bool   `json:"page"`
		Note     string `json:"note,omitempty"`
	}
	cases := []struct {
		ty     reflect.Type
		answer string
		want   string // a part of the refusal, "" when accepted
	}{
		{reflect.TypeFor[decision](), `null`, "answer is null, want object"},
		{reflect.TypeFor[decision](), `{"approved":true,"pgae":true}`, `answer has no member "pgae"; did you mean "page"?`},
		{reflect.TypeFor[decision](), `{"Approved":true,"page":false}`, `answer has no member "Approved"; did you mean "approved"?`},
		{reflect.TypeFor[decision](), `{"approved":true}`, `answer lacks the required member "page"`},
		{reflect.TypeFor[decision](), `{"approved":null,"page":true}`, "answer.approved is null, want boolean"},
		{reflect.TypeFor[decision](), `{"approved":true,"page":false}`, ""},
		{reflect.TypeFor[decision](), `{"approved":true,"page":false,"note":"n"}`, ""},
		{reflect.TypeFor[*decision](), `null`, ""},
		{reflect.TypeFor[*decision](), `{"approved":true}`, `lacks the required member "page"`},
		{reflect.TypeFor[bool](), `null`, "answer is null, want boolean"},
		{reflect.TypeFor[string](), `null`, "answer is null, want string"},
		{reflect.TypeFor[int](), `null`, "answer is null, want integer"},
		{reflect.TypeFor[time.Time](), `null`, "answer is null, want string"},
		{reflect.TypeFor[*bool](), `null`, ""},
		{reflect.TypeFor[[]string](), `null`, ""},
		{reflect.TypeFor[map[string]int](), `null`, ""},
		{reflect.TypeFor[any](), `null`, ""},
		{reflect.TypeFor[[]bool](), `[true,null]`, "answer[1] is null, want boolean"},
		{reflect.TypeFor[answerList](), `{"label":"a","next":{"label":"b","next":null,"nxet":1}}`, `answer.next has no member "nxet"; did you mean "next"?`},
		{reflect.TypeFor[answerHolder](), `{"list":{"label":"a"}}`, `answer.list lacks the required member "next"`},
		{reflect.TypeFor[answerHolder](), `{}`, ""},
	}
	for _, c := range cases {
		err := checkAnswer(schemaJSON(t, c.ty), json.RawMessage(c.answer))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %s refused: %v", c.ty, c.answer, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %s: got %v, want an error containing %q", c.ty, c.answer, err, c.want)
		}
	}
}

// TestExpectsSchemaStrict: the recorded schema of a struct says what the
// check enforces: required members, no others, nested structs too.
func TestExpectsSchemaStrict(t *testing.T) {
	got := string(schemaJSON(t, reflect.TypeFor[answerHolder]()))
	for _, want := range []string{
		`"additionalProperties":false`, `"$defs":{"runtime.answerList":`, `"$ref":"#/$defs/runtime.answerList"`,
		`"required":["next","label"]`, `"anyOf":[{"$ref":"#/$defs/runtime.answerList"},{"type":"null"}]`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("schema lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"required":["list"`) {
		t.Errorf("omitempty member is required:\n%s", got)
	}
}

// FuzzCheckAnswer: an answer the schema of answerFixture accepts always
// decodes into it.
func FuzzCheckAnswer(f *testing.F) {
	for _, s := range []string{`{"ok":true}`, `{"n":300}`, `{"tags":["a"]}`, `{"inner":{"raw":"aGk="}}`, `[1]`, `"x"`, `{"arr":[true]}`} {
		f.Add(s)
	}
	raw := schemaJSON(f, reflect.TypeFor[answerFixture]())
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

// labelledAnswer carries the labels a form shows for its members.
type labelledAnswer struct {
	Approve bool   `json:"approve" title:"Approve the refund" description:"Tick to pay it out."`
	Note    string `json:"note,omitempty" title:"Note"`
	Plain   int    `json:"plain"`
}

func TestExpectsSchemaLabels(t *testing.T) {
	got := string(schemaJSON(t, reflect.TypeFor[labelledAnswer]()))
	for _, want := range []string{
		`"approve":{"description":"Tick to pay it out.","title":"Approve the refund","type":"boolean"}`,
		`"note":{"title":"Note","type":"string"}`,
		`"plain":{"maximum"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("schema lacks %s:\n%s", want, got)
		}
	}
	if err := checkAnswer(schemaJSON(t, reflect.TypeFor[labelledAnswer]()), json.RawMessage(`{"approve":true,"plain":1}`)); err != nil {
		t.Errorf("a labelled schema refuses a good answer: %v", err)
	}
}
