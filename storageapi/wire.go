package storageapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// The wire format: requests and responses are the storage/core records in
// encoding/json's form, wrapped in the envelopes below where an operation takes
// scalars. The addressed member, chain root, snapshot or node is in the path.
// Request bodies are decoded strictly: unknown fields, trailing data and bodies
// over MaxBodyBytes are refused with 400 (413 for the size).

// MaxBodyBytes bounds a request body. The largest is a node's report of every
// dataset and snapshot of its pool.
const MaxBodyBytes = 4 << 20

// decodeStrict decodes exactly one JSON value of type T from data, refusing
// unknown fields and trailing data. Errors wrap core.ErrInvalid and never
// quote the body.
func decodeStrict[T any](data []byte) (T, error) {
	var v T
	return v, decodeStrictInto(data, &v)
}

// decodeStrictInto is decodeStrict into v, whose fields the JSON does not
// carry (json:"-") it leaves as they are.
func decodeStrictInto(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%w: %s", core.ErrInvalid, describeJSONError(err))
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: trailing data after the JSON value", core.ErrInvalid)
	}
	return nil
}

// describeJSONError says what is wrong without echoing the input: syntax
// errors by offset, type errors by field, unknown fields by (clipped) name.
func describeJSONError(err error) string {
	var syntax *json.SyntaxError
	var typed *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("not valid JSON near byte %d", syntax.Offset)
	case errors.As(err, &typed):
		return fmt.Sprintf("field %q must be %s", clip(typed.Field, 60), typed.Type)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "empty or truncated JSON"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + clip(strings.TrimPrefix(err.Error(), "json: unknown field "), 60)
	}
	return "malformed JSON"
}

// validRef refuses a reference that is set but not canonical.
func validRef(what string, r chain.Ref) error {
	if _, err := chain.ParseRef(r.String()); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// validCluster refuses a cluster ID that is not a canonical UUID.
func validCluster(what string, c chain.ClusterID) error {
	if !chain.IsUUID(string(c)) {
		return fmt.Errorf("%w: %s %q is not a lowercase UUID", core.ErrInvalid, what, clip(string(c), 60))
	}
	return nil
}

func clip(s string, limitBytes int) string {
	if len(s) <= limitBytes {
		return s
	}
	return s[:limitBytes] + "…"
}
