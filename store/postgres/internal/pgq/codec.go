package pgq

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// The type OIDs read or written in binary.
const (
	boolOID   = 16
	byteaOID  = 17
	int8OID   = 20
	int2OID   = 21
	int4OID   = 23
	float4OID = 700
	float8OID = 701
)

const (
	textFormat   = 0
	binaryFormat = 1
)

// resultFormats asks for the columns of fields in binary where that is
// plain (bytea, integers, booleans, floats) and in text otherwise; nil
// (all text) when there is no such column.
func resultFormats(fields []pgconn.FieldDescription) []int16 {
	var out []int16
	for i, f := range fields {
		if binaryResult(f.DataTypeOID) {
			if out == nil {
				out = make([]int16, len(fields))
			}
			out[i] = binaryFormat
		}
	}
	return out
}

func binaryResult(oid uint32) bool {
	switch oid {
	case boolOID, byteaOID, int8OID, int2OID, int4OID, float4OID, float8OID:
		return true
	}
	return false
}

// encodeArgs encodes args for parameters of the types oids (the server's
// inference): values (nil for NULL) and their formats (nil when all are
// text).
func encodeArgs(oids []uint32, args []any) ([][]byte, []int16, error) {
	if len(args) != len(oids) {
		return nil, nil, fmt.Errorf("pgq: %d arguments for %d parameters", len(args), len(oids))
	}
	if len(args) == 0 {
		return nil, nil, nil
	}
	values := make([][]byte, len(args))
	var formats []int16
	for i, a := range args {
		v, bin, err := encodeArg(a, oids[i])
		if err != nil {
			return nil, nil, fmt.Errorf("pgq: argument %d: %w", i+1, err)
		}
		values[i] = v
		if bin {
			if formats == nil {
				formats = make([]int16, len(args))
			}
			formats[i] = binaryFormat
		}
	}
	return values, formats, nil
}

// encodeArg is a's value for a parameter of type oid, and whether it is
// binary; nil is NULL (so is a nil pointer, byte slice or slice).
func encodeArg(a any, oid uint32) ([]byte, bool, error) {
	switch v := a.(type) {
	case nil:
		return nil, false, nil
	case string:
		return []byte(v), false, nil
	case []byte:
		if v == nil {
			return nil, false, nil
		}
		return v, oid == byteaOID, nil
	case int:
		return strconv.AppendInt(nil, int64(v), 10), false, nil
	case int64:
		return strconv.AppendInt(nil, v, 10), false, nil
	case int32:
		return strconv.AppendInt(nil, int64(v), 10), false, nil
	case bool:
		if v {
			return []byte("t"), false, nil
		}
		return []byte("f"), false, nil
	case float64:
		return strconv.AppendFloat(nil, v, 'g', -1, 64), false, nil
	case []string:
		if v == nil {
			return nil, false, nil
		}
		return textArray(v), false, nil
	case [][]byte:
		if v == nil {
			return nil, false, nil
		}
		return byteaArray(v), false, nil
	case []int64:
		if v == nil {
			return nil, false, nil
		}
		return intArray(v), false, nil
	}
	return encodeReflect(reflect.ValueOf(a), oid)
}

// encodeReflect encodes a pointer (nil: NULL) and named strings,
// integers, booleans and floats.
func encodeReflect(rv reflect.Value, oid uint32) ([]byte, bool, error) {
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return nil, false, nil
		}
		return encodeArg(rv.Elem().Interface(), oid)
	case reflect.String:
		return []byte(rv.String()), false, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(nil, rv.Int(), 10), false, nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return strconv.AppendUint(nil, rv.Uint(), 10), false, nil
	case reflect.Bool:
		return encodeArg(rv.Bool(), oid)
	case reflect.Float32, reflect.Float64:
		return encodeArg(rv.Float(), oid)
	}
	return nil, false, fmt.Errorf("unsupported type %s", rv.Type())
}

// textArray is a text[] literal of ss.
func textArray(ss []string) []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for j := 0; j < len(s); j++ {
			if s[j] == '"' || s[j] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(s[j])
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// intArray is a bigint[] literal of ns.
func intArray(ns []int64) []byte {
	out := []byte{'{'}
	for i, n := range ns {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendInt(out, n, 10)
	}
	return append(out, '}')
}

// byteaArray is a bytea[] literal of bs, each in hex (nil: NULL).
func byteaArray(bs [][]byte) []byte {
	out := []byte{'{'}
	for i, v := range bs {
		if i > 0 {
			out = append(out, ',')
		}
		if v == nil {
			out = append(out, "NULL"...)
			continue
		}
		out = append(out, `"\\x`...)
		out = hex.AppendEncode(out, v)
		out = append(out, '"')
	}
	return append(out, '}')
}

// scanValue scans src, a value of the column f (nil: NULL), into dst.
func scanValue(f *pgconn.FieldDescription, src []byte, dst any) error {
	if src == nil {
		return scanNull(dst)
	}
	switch d := dst.(type) {
	case *string:
		s, err := asText(f, src)
		*d = s
		return err
	case *[]byte:
		*d = append([]byte(nil), src...) // src is the connection's buffer
		return nil
	case *int64:
		n, err := asInt(f, src)
		*d = n
		return err
	case *bool:
		v, err := asBool(f, src)
		*d = v
		return err
	}
	// Other integers and floats, named types, pointers.
	return scanReflect(f, src, dst)
}

// scanNull sets the pointer or slice dst points to to nil, or fails.
func scanNull(dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		switch rv.Elem().Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Interface:
			rv.Elem().SetZero()
			return nil
		}
	}
	return fmt.Errorf("cannot scan NULL into %T", dst)
}

// scanReflect scans into a pointer to a pointer (allocated) or to a named
// string, integer, boolean or float.
func scanReflect(f *pgconn.FieldDescription, src []byte, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("cannot scan into %T", dst)
	}
	e := rv.Elem()
	switch e.Kind() {
	case reflect.Pointer:
		v := reflect.New(e.Type().Elem())
		if err := scanValue(f, src, v.Interface()); err != nil {
			return err
		}
		e.Set(v)
		return nil
	case reflect.String:
		s, err := asText(f, src)
		e.SetString(s)
		return err
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := asInt(f, src)
		if err == nil && e.OverflowInt(n) {
			return fmt.Errorf("%d does not fit %s", n, e.Type())
		}
		e.SetInt(n)
		return err
	case reflect.Bool:
		v, err := asBool(f, src)
		e.SetBool(v)
		return err
	case reflect.Float32, reflect.Float64:
		v, err := asFloat(f, src)
		e.SetFloat(v)
		return err
	}
	return fmt.Errorf("cannot scan type %d into %T", f.DataTypeOID, dst)
}

func asText(f *pgconn.FieldDescription, src []byte) (string, error) {
	if f.Format == binaryFormat && f.DataTypeOID != byteaOID {
		switch f.DataTypeOID {
		case boolOID:
			v, err := asBool(f, src)
			return strconv.FormatBool(v), err
		case float4OID, float8OID:
			v, err := asFloat(f, src)
			return strconv.FormatFloat(v, 'g', -1, 64), err
		}
		n, err := asInt(f, src)
		return strconv.FormatInt(n, 10), err
	}
	return string(src), nil
}

func asInt(f *pgconn.FieldDescription, src []byte) (int64, error) {
	if f.Format == binaryFormat {
		switch {
		case f.DataTypeOID == int8OID && len(src) == 8:
			return int64(binary.BigEndian.Uint64(src)), nil
		case f.DataTypeOID == int4OID && len(src) == 4:
			return int64(int32(binary.BigEndian.Uint32(src))), nil
		case f.DataTypeOID == int2OID && len(src) == 2:
			return int64(int16(binary.BigEndian.Uint16(src))), nil
		case f.DataTypeOID == boolOID && len(src) == 1:
			return int64(src[0]), nil
		}
		return 0, fmt.Errorf("cannot scan type %d into an integer", f.DataTypeOID)
	}
	n, err := strconv.ParseInt(string(src), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cannot scan %q into an integer", truncate(src))
	}
	return n, nil
}

func asBool(f *pgconn.FieldDescription, src []byte) (bool, error) {
	if f.Format == binaryFormat {
		if f.DataTypeOID == boolOID && len(src) == 1 {
			return src[0] != 0, nil
		}
		return false, fmt.Errorf("cannot scan type %d into a bool", f.DataTypeOID)
	}
	switch string(src) {
	case "t", "true":
		return true, nil
	case "f", "false":
		return false, nil
	}
	return false, fmt.Errorf("cannot scan %q into a bool", truncate(src))
}

func asFloat(f *pgconn.FieldDescription, src []byte) (float64, error) {
	if f.Format == binaryFormat {
		switch {
		case f.DataTypeOID == float8OID && len(src) == 8:
			return math.Float64frombits(binary.BigEndian.Uint64(src)), nil
		case f.DataTypeOID == float4OID && len(src) == 4:
			return float64(math.Float32frombits(binary.BigEndian.Uint32(src))), nil
		}
		n, err := asInt(f, src)
		return float64(n), err
	}
	v, err := strconv.ParseFloat(string(src), 64)
	if err != nil {
		return 0, fmt.Errorf("cannot scan %q into a float", truncate(src))
	}
	return v, nil
}

// truncate is at most 32 bytes of src, for an error.
func truncate(src []byte) []byte { return src[:min(len(src), 32)] }
