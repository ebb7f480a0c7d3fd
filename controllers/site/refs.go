package site

import "github.com/baton-dr/baton/storage/chain"

// parseOptionalRef reads a handle that may be empty.
func parseOptionalRef(handle string) (chain.Ref, error) {
	if handle == "" {
		return chain.Ref{}, nil
	}
	return chain.ParseRef(handle)
}
