package storageapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/baton-dr/baton/storageapi"
)

const testSecret = "hunter2-very-secret"

func newHandler(t testing.TB, log logr.Logger) (*storageapi.Server, *storageapi.Local) {
	t.Helper()
	local := newSite(t, clusterA, storageapi.Peers{})
	server, err := storageapi.NewServer(local, testSecret, log)
	must(t, err)
	return server, local
}

// do sends one request to the handler and decodes a problem document if one came back.
func do(server http.Handler, method, path, token string, body []byte) (*httptest.ResponseRecorder, storageapi.Problem) {
	request := httptest.NewRequest(method, path, bytes.NewReader(body))
	if token != "" {
		request.Header.Set("Authorization", "Bearer "+token)
	}
	recorder := httptest.NewRecorder()
	server.ServeHTTP(recorder, request)
	var p storageapi.Problem
	if recorder.Header().Get("Content-Type") == "application/problem+json" {
		_ = json.Unmarshal(recorder.Body.Bytes(), &p)
	}
	return recorder, p
}

func TestAuthentication(t *testing.T) {
	server, _ := newHandler(t, logr.Discard())
	path := "/v1/snapshots"
	if r, p := do(server, "GET", path, "", nil); r.Code != 401 || p.Kind != "unauthorized" || r.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %d %+v, want 401 with a challenge", r.Code, p)
	}
	request := httptest.NewRequest("GET", path, nil)
	request.Header.Set("Authorization", "Basic "+testSecret)
	recorder := httptest.NewRecorder()
	server.ServeHTTP(recorder, request)
	if recorder.Code != 401 {
		t.Errorf("the secret under another scheme: %d, want 401", recorder.Code)
	}
	if r, p := do(server, "GET", path, "secret-of-another-cluster", nil); r.Code != 403 || p.Kind != "forbidden" {
		t.Errorf("another cluster's token: %d %+v, want 403", r.Code, p)
	}
	if r, _ := do(server, "GET", path, testSecret, nil); r.Code != 200 || strings.TrimSpace(r.Body.String()) != "[]" {
		t.Errorf("the right token: %d %q, want 200 []", r.Code, r.Body.String())
	}
	if _, err := storageapi.NewServer(nil, " ", logr.Discard()); err == nil {
		t.Error("a server without a secret was made")
	}
}

func TestMalformedRequestsAreRefusedAndChangeNothing(t *testing.T) {
	server, local := newHandler(t, logr.Discard())
	good := `{"Request":{"Name":"db","SizeBytes":1048576,"PlaceCount":1,"VolumeMode":"Block"}}`
	tests := []struct {
		name, method, path, body string
		status                   int
		kind, says               string
	}{
		{"not JSON", "POST", "/v1/volumes", `{"Request":`, 400, "invalid", "truncated"},
		{"syntax", "POST", "/v1/volumes", `{"Request" x}`, 400, "invalid", "near byte"},
		{"unknown field", "POST", "/v1/volumes", `{"Request":{"Name":"db","Colour":"red"}}`, 400, "invalid", `unknown field "Colour"`},
		{"wrong type", "POST", "/v1/volumes", `{"Request":{"Name":5}}`, 400, "invalid", "Request.Name"},
		{"trailing data", "POST", "/v1/volumes", good + `{}`, 400, "invalid", "trailing"},
		{"bad ref in the path", "GET", "/v1/volumes/not-a-ref", ``, 400, "malformed-ref", "malformed volume handle"},
		{"bad target", "POST", "/v1/volumes/aaaaaaaa-0000-4000-8000-00000000000a:aaaaaaaa-0000-4000-8000-000000000001/enable", `{"Target":"B"}`, 400, "invalid", "lowercase UUID"},
		{"bad source ref", "POST", "/v1/volumes", `{"Request":{"Name":"c","SizeBytes":1,"PlaceCount":1,"VolumeMode":"Block"},"Source":{"Volume":{"Cluster":"x","Volume":"y"}}}`, 400, "malformed-ref", "source volume"},
		{"report for another node", "POST", "/v1/nodes/n1/report", `{"Node":"n2"}`, 400, "invalid", "sent for node"},
		{"no such operation", "POST", "/v1/teleport", `{}`, 404, "no-route", "no such operation"},
		{"oversized", "POST", "/v1/volumes", `{"Request":{"Name":"` + strings.Repeat("x", storageapi.MaxBodyBytes) + `"}}`, 413, "too-large", "too large"},
		{"capacity without a count", "GET", "/v1/capacity", ``, 400, "invalid", "place_count"},
	}
	for _, tt := range tests {
		r, p := do(server, tt.method, tt.path, testSecret, []byte(tt.body))
		if r.Code != tt.status || p.Kind != tt.kind || !strings.Contains(p.Detail, tt.says) || p.Status != tt.status || p.Type == "" {
			t.Errorf("%s: %d %+v; want %d %s saying %q", tt.name, r.Code, p, tt.status, tt.kind, tt.says)
		}
		if len(p.Detail) > 400 {
			t.Errorf("%s: a detail of %d bytes quotes the request", tt.name, len(p.Detail))
		}
	}
	if snaps, _ := local.ListSnapshots(ctx); len(snaps) != 0 {
		t.Error("refused requests changed the site")
	}
	if r, _ := do(server, "POST", "/v1/volumes", testSecret, []byte(good)); r.Code != 200 {
		t.Errorf("the good request after them: %d %s", r.Code, r.Body.String())
	}
}

func TestTheSecretIsNeverLogged(t *testing.T) {
	var lines strings.Builder
	log := funcr.New(func(prefix, args string) { lines.WriteString(prefix + args + "\n") }, funcr.Options{Verbosity: 9})
	server, _ := newHandler(t, log)
	do(server, "GET", "/v1/snapshots", testSecret, nil)
	do(server, "GET", "/v1/snapshots", testSecret+"-wrong", nil)
	do(server, "POST", "/v1/volumes", testSecret, []byte(`{"Request":{"Name":"`+testSecret+`"}}`))
	if lines.Len() == 0 {
		t.Fatal("nothing was logged: the test proves nothing")
	}
	if strings.Contains(lines.String(), testSecret) || strings.Contains(lines.String(), "hunter2") {
		t.Errorf("the secret reached the log:\n%s", lines.String())
	}
}

// FuzzServerRequest sends arbitrary bodies to every route: the server answers
// each with a problem document or a value, never an internal error (one no
// sentinel names) and never a panic.
func FuzzServerRequest(f *testing.F) {
	routes := []struct{ method, path string }{
		{"POST", "/v1/volumes"},
		{"POST", "/v1/volumes/aaaaaaaa-0000-4000-8000-00000000000a:aaaaaaaa-0000-4000-8000-000000000001/expand"},
		{"POST", "/v1/volumes/aaaaaaaa-0000-4000-8000-00000000000a:aaaaaaaa-0000-4000-8000-000000000001/attach"},
		{"POST", "/v1/volumes/aaaaaaaa-0000-4000-8000-00000000000a:aaaaaaaa-0000-4000-8000-000000000001/enable"},
		{"POST", "/v1/volumes/aaaaaaaa-0000-4000-8000-00000000000a:aaaaaaaa-0000-4000-8000-000000000001/failover"},
		{"POST", "/v1/volumes/aaaaaaaa-0000-4000-8000-00000000000a:aaaaaaaa-0000-4000-8000-000000000001/resync"},
		{"POST", "/v1/volumes/aaaaaaaa-0000-4000-8000-00000000000a:aaaaaaaa-0000-4000-8000-000000000001/successor"},
		{"POST", "/v1/replicas"},
		{"POST", "/v1/snapshots"},
		{"POST", "/v1/nodes/n1/report"},
	}
	f.Add(uint8(0), []byte(`{"Request":{"Name":"db","SizeBytes":1048576,"PlaceCount":1,"VolumeMode":"Block"}}`))
	f.Add(uint8(0), []byte(`{"Request":{"Name":"db","SizeBytes":1048576,"PlaceCount":1,"VolumeMode":"Block"},"Source":{"Volume":{"Cluster":"aaaaaaaa-0000-4000-8000-00000000000a","Volume":"aaaaaaaa-0000-4000-8000-000000000001"}}}`))
	f.Add(uint8(1), []byte(`{"SizeBytes":5}`))
	f.Add(uint8(7), []byte(`{"Source":{"Cluster":"bbbbbbbb-0000-4000-8000-00000000000b","Volume":"bbbbbbbb-0000-4000-8000-000000000001"},"Root":{"Cluster":"bbbbbbbb-0000-4000-8000-00000000000b","Volume":"bbbbbbbb-0000-4000-8000-000000000001"},"Shape":{"SizeBytes":1,"PlaceCount":1}}`))
	f.Add(uint8(8), []byte(`{"Member":{"Cluster":"aaaaaaaa-0000-4000-8000-00000000000a","Volume":"aaaaaaaa-0000-4000-8000-000000000001"},"Name":"s"}`))
	f.Add(uint8(9), []byte(`{"Node":"n1","Datasets":[{"Name":"vol-x","Snapshots":[{"Name":"a","GUID":"g"}]}]}`))
	server, _ := newHandler(f, logr.Discard())
	do(server, "POST", routes[0].path, testSecret, []byte(`{"Request":{"Name":"seed","SizeBytes":1048576,"PlaceCount":1,"VolumeMode":"Block"}}`))
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		rt := routes[int(route)%len(routes)]
		r, p := do(server, rt.method, rt.path, testSecret, body)
		if r.Code == 500 || p.Kind == "internal" {
			t.Fatalf("%s %s %q: %d %+v", rt.method, rt.path, body, r.Code, p)
		}
		if r.Code >= 400 && (p.Kind == "" || p.Status != r.Code) {
			t.Fatalf("%s %s: %d without a problem document: %q", rt.method, rt.path, r.Code, r.Body.String())
		}
	})
}
