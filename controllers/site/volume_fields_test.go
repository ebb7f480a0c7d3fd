package site_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// TestEveryVolumeFieldRoundTrips fills every field of core.Volume, found by
// reflection so that a field added to the record later is filled too, puts
// the record through the CRD store and reads it back unchanged. A field the
// store forgets (as it once forgot UserSnapshots: CSI snapshots were never
// kept on a real site) reads back zero and fails here.
func TestEveryVolumeFieldRoundTrips(t *testing.T) {
	onEachBackend(t, func(t *testing.T, c client.Client, ns string, s *sitecontroller.Store) {
		f := &filler{}
		var v core.Volume
		f.fill(reflect.ValueOf(&v).Elem(), "Volume")
		v.Ref = ref(clusterA, 1) // the store keeps this cluster's members only
		for _, empty := range zeroLeaves(reflect.ValueOf(v), "Volume") {
			t.Errorf("the filler left %s zero: teach it the field's type", empty)
		}
		if err := s.PutVolume(v); err != nil {
			t.Fatalf("put %s: %v", dump(v), err)
		}
		got := must(s.Volumes())
		if len(got) != 1 {
			t.Fatalf("read %d volumes, put 1", len(got))
		}
		if w, g := dump(v), dump(got[0]); w != g {
			t.Errorf("read back differs:\nput  %s\nread %s", w, g)
			for _, field := range differingFields(reflect.ValueOf(v), reflect.ValueOf(got[0]), "Volume") {
				t.Errorf("%s did not survive the store", field)
			}
		}
	})
}

// filler gives every field a distinct, non-zero value the CRDs accept: each
// string and number is drawn from one counter, so that list entries differ
// (list-map keys) and a field read into another's place shows.
type filler struct{ n int }

func (f *filler) next() int { f.n++; return f.n }

// fill sets v, whose place in the record is path.
func (f *filler) fill(v reflect.Value, path string) {
	switch v.Interface().(type) {
	case chain.Ref:
		v.Set(reflect.ValueOf(ref(clusterB, f.next())))
		return
	case core.SnapshotRef:
		v.Set(reflect.ValueOf(core.SnapshotRef{Member: ref(clusterA, f.next()),
			Snapshot: fmt.Sprintf("5aaaaaaa-0000-4000-8000-%012d", f.next())}))
		return
	case chain.State:
		v.Set(reflect.ValueOf(chain.Demoted)) // a member that knows its successor is not Active
		return
	case core.VolumeMode:
		v.Set(reflect.ValueOf(core.Block))
		return
	case backend.Provisioning:
		v.Set(reflect.ValueOf(backend.Thick)) // thin is the zero value
		return
	case time.Time:
		v.Set(reflect.ValueOf(at(f.next())))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			field := v.Type().Field(i)
			if !field.IsExported() {
				panic(fmt.Sprintf("%s.%s is unexported: the filler cannot reach it", path, field.Name))
			}
			f.fill(v.Field(i), path+"."+field.Name)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			f.fill(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		key, value := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		f.fill(key, path+"[key]")
		f.fill(value, path+"[value]")
		v.SetMapIndex(key, value)
	case reflect.String:
		v.SetString(fmt.Sprintf("f%d", f.next())) // matches every name and fsType pattern
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(1 + f.next()%15)) // within every bound: node-ids, place counts
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(1 + f.next()%15))
	default:
		panic(fmt.Sprintf("%s is a %s: teach the filler its kind", path, v.Type()))
	}
}

// zeroLeaves lists the places in v that hold a zero value.
func zeroLeaves(v reflect.Value, path string) []string {
	switch v.Interface().(type) {
	case chain.Ref, core.SnapshotRef, time.Time:
		if v.IsZero() {
			return []string{path}
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			out = append(out, zeroLeaves(v.Field(i), path+"."+v.Type().Field(i).Name)...)
		}
		return out
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			return []string{path}
		}
		if v.Kind() == reflect.Slice {
			return zeroLeaves(v.Index(0), path+"[0]")
		}
		return nil
	}
	if v.IsZero() {
		return []string{path}
	}
	return nil
}

// differingFields names the top-level fields (and embedded structs' fields)
// of two records that differ.
func differingFields(want, got reflect.Value, path string) []string {
	var out []string
	for i := range want.NumField() {
		field := want.Type().Field(i)
		name := path + "." + field.Name
		if field.Anonymous && field.Type.Kind() == reflect.Struct {
			out = append(out, differingFields(want.Field(i), got.Field(i), name)...)
			continue
		}
		if dump(want.Field(i).Interface()) != dump(got.Field(i).Interface()) {
			out = append(out, strings.TrimPrefix(name, path+"."))
		}
	}
	return out
}
