// Package expense holds the application's own types that the approval
// document's channels, its review node's config and its interrupt are bound
// to. The generated package (approvalgraph) imports it; it imports nothing
// of ilmek.
package expense

// Claim is an expense claim, the value of the document's "claim" channel.
type Claim struct {
	ID       string  `json:"id"`
	Employee string  `json:"employee"`
	Amount   float64 `json:"amount"`
	Purpose  string  `json:"purpose"`
}

// Question is what the review node asks a person: the interrupt's payload.
type Question struct {
	Text  string `json:"text"`
	Claim Claim  `json:"claim"`
}

// Decision is a person's answer to a Question, the value of the document's
// "decision" channel. Resume refuses an answer that does not decode into it.
type Decision struct {
	Approved bool   `json:"approved"`
	Approver string `json:"approver"`
	Note     string `json:"note,omitempty"`
}

// ReviewConfig is the config of every node of type "review": the question
// it asks and the amount below which it approves without asking.
type ReviewConfig struct {
	Question         string  `json:"question"`
	AutoApproveBelow float64 `json:"auto_approve_below"`
}
