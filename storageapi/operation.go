package storageapi

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"github.com/baton-dr/baton/storage/chain"
)

// Operation is one operation of the storage API as a Cluster carries it,
// whatever its request and answer types: the declarations of ops.go.
// Only this package declares them.
type Operation interface {
	// Name is the operation a request makes, as errors, the simulation's
	// call records and its faults name it.
	Name(request any) string
	route() string
	send(ctx context.Context, c *Client, request any) (any, error)
	local(ctx context.Context, l *Local, request any) (any, error)
	serve(r *http.Request, body []byte, c Cluster) (any, error)
}

// op declares one operation: what a caller asks (Req) and is answered
// (Resp), how both cross the wire, what the server refuses before the
// operation runs, and how the site's own control plane makes it (Local).
type op[Req, Resp any] struct {
	name string
	// renamed names a request that makes a variant of the operation over
	// the same route (nil: name).
	renamed func(Req) string
	// pattern is the method and path of the route, with the wildcard at
	// names, if any, in braces.
	pattern string
	// at is what the path addresses in a request (nil: nothing).
	at *address[Req]
	// body: the request is the JSON body, less the fields at fills
	// (tagged json:"-").
	body bool
	// check refuses a request the wire carried before the operation runs,
	// beyond what decoding it refuses.
	check func(r *http.Request, request Req) error
	run   func(ctx context.Context, l *Local, request Req) (Resp, error)
}

// address is where a request's addressed record (a member, a snapshot, a
// node) goes in the path, and how the server takes it back.
type address[Req any] struct {
	wildcard string
	query    bool // ?wildcard=value rather than {wildcard} in the path
	get      func(Req) string
	set      func(r *Req, value string) error
}

// refAt addresses the member or chain a request names by field.
func refAt[Req any](field func(*Req) *chain.Ref) *address[Req] {
	return &address[Req]{wildcard: "ref",
		get: func(r Req) string { return field(&r).String() },
		set: func(r *Req, value string) (err error) { *field(r), err = chain.ParseRef(value); return err }}
}

// itself is the field of a request that is the reference alone.
func itself(r *chain.Ref) *chain.Ref { return r }

func (o *op[Req, Resp]) Name(request any) string {
	if r, ok := request.(Req); ok && o.renamed != nil {
		return o.renamed(r)
	}
	return o.name
}

func (o *op[Req, Resp]) route() string { return o.pattern }

// call makes the operation on c, typed.
func (o *op[Req, Resp]) call(ctx context.Context, c Cluster, request Req) (Resp, error) {
	out, err := c.Carry(ctx, o, request)
	resp, _ := out.(Resp)
	return resp, err
}

// path is the request's method and path as the client sends them.
func (o *op[Req, Resp]) path(request Req) (method, path string) {
	method, path, _ = strings.Cut(o.pattern, " ")
	switch {
	case o.at == nil:
	case o.at.query:
		path += "?" + o.at.wildcard + "=" + url.QueryEscape(o.at.get(request))
	default:
		path = strings.Replace(path, "{"+o.at.wildcard+"}", url.PathEscape(o.at.get(request)), 1)
	}
	return method, path
}

func (o *op[Req, Resp]) send(ctx context.Context, c *Client, request any) (any, error) {
	r := request.(Req)
	method, path := o.path(r)
	var in any
	if o.body {
		in = r
	}
	var resp Resp
	var out any
	if !none[Resp]() {
		out = &resp
	}
	if err := c.call(ctx, method, path, in, out); err != nil {
		var zero Resp
		return zero, err
	}
	return resp, nil
}

func (o *op[Req, Resp]) local(ctx context.Context, l *Local, request any) (any, error) {
	return o.run(ctx, l, request.(Req))
}

// serve takes the request off the wire -- the path's address first, then
// the body, then the checks -- has c make it, and returns the answer to
// encode (nil: none).
func (o *op[Req, Resp]) serve(r *http.Request, body []byte, c Cluster) (any, error) {
	var request Req
	if o.at != nil {
		value := r.PathValue(o.at.wildcard)
		if o.at.query {
			value = r.URL.Query().Get(o.at.wildcard)
		}
		if err := o.at.set(&request, value); err != nil {
			return nil, err
		}
	}
	if o.body {
		if err := decodeStrictInto(body, &request); err != nil {
			return nil, err
		}
	}
	if o.check != nil {
		if err := o.check(r, request); err != nil {
			return nil, err
		}
	}
	answer, err := c.Carry(r.Context(), o, request)
	if err != nil {
		return nil, err
	}
	if none[Resp]() {
		return nil, nil
	}
	return nonNilList(answer), nil
}

// none tells whether an operation answers nothing (204 on the wire).
func none[Resp any]() bool {
	_, ok := any(*new(Resp)).(struct{})
	return ok
}

// nonNilList makes an empty list encode as [] rather than null.
func nonNilList(answer any) any {
	if v := reflect.ValueOf(answer); v.Kind() == reflect.Slice && v.IsNil() {
		return reflect.MakeSlice(v.Type(), 0, 0).Interface()
	}
	return answer
}

// nothing drops the result of a decision whose operation answers none.
func nothing[T any](_ T, err error) (struct{}, error) { return struct{}{}, err }
