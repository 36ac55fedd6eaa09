// Package shop holds the user types the bound golden case binds channels
// and configs to.
package shop

import "time"

// Message is one chat message.
type Message struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// Cart is a shopping cart.
type Cart struct {
	Items []string `json:"items"`
	Total float64  `json:"total"`
}

// Intent is what the customer wants.
type Intent string

// Base holds options every node type shares.
type Base struct {
	Retries int `json:"retries"`
}

// Tool is a tool an LLM may call.
type Tool struct {
	Name string `json:"name"`
}

// LLMOptions is the config of an llm node.
type LLMOptions struct {
	Base
	Model       string  `json:"model"`
	Temperature float64 `json:"temperature"`
	MaxTokens   int32   `json:"max_tokens"`
	Tools       []Tool  `json:"tools"`
	Stop        *string `json:"stop,omitempty"`
	Extra       any     `json:"extra"`
	// Seed is above the int64 range on purpose: the generator must write
	// it as an unsigned constant.
	Seed uint64 `json:"seed,omitempty"`
	// Since and Until are written as time.Date calls, in the stored offset.
	Since time.Time  `json:"since"`
	Until *time.Time `json:"until,omitempty"`
}
