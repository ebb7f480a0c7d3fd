package browsertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// maxMessagesPerCall bounds how many events one call may skip over while it
// waits for its response, so that a browser flooding the pipe with events
// cannot keep a test reading for ever.
const maxMessagesPerCall = 100_000

// maxMessageBytes bounds one DevTools message; a full-page screenshot of a
// large report is the biggest we expect (tens of megabytes as base64).
const maxMessageBytes = 256 << 20

// errMessageTooLarge is returned when the browser sends a message above
// maxMessageBytes.
var errMessageTooLarge = errors.New("browsertest: DevTools message too large")

// message is one DevTools protocol message in either direction: a command
// (ID, Method, Params), its response (ID, Result or Error) or an event
// (Method, Params). SessionID routes it to an attached page.
type message struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *protocolError  `json:"error,omitempty"`
}

// protocolError is the error of a failed command.
type protocolError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *protocolError) Error() string {
	return fmt.Sprintf("DevTools error %d: %s", e.Code, e.Message)
}

// conn speaks the DevTools protocol over --remote-debugging-pipe: commands go
// to the browser's fd 3 and messages come back on its fd 4, each a JSON
// object terminated by a NUL byte. It is used from one goroutine only: a
// call writes its command and reads until its response arrives, handing every
// event read on the way to onEvent. Reading synchronously keeps the order of
// events and responses exactly as the browser sent them.
type conn struct {
	toBrowser   *os.File
	fromBrowser *os.File
	reader      *bufio.Reader
	nextID      int64
	onEvent     func(message)
	// unanswered are the ids of commands sent by send, whose responses
	// are read and dropped.
	unanswered map[int64]bool
	// sendErr is the first failure of send, reported by the next call.
	sendErr error
}

func newConn(toBrowser, fromBrowser *os.File, onEvent func(message)) *conn {
	if onEvent == nil {
		panic("browsertest: conn needs an event handler")
	}
	return &conn{
		toBrowser:   toBrowser,
		fromBrowser: fromBrowser,
		reader:      bufio.NewReaderSize(fromBrowser, 1<<16),
		onEvent:     onEvent,
		unanswered:  map[int64]bool{},
	}
}

// call sends method with params to the session (the browser itself when
// sessionID is empty) and decodes the response's result into result (when not
// nil). It fails when deadline passes before the response arrives.
func (c *conn) call(deadline time.Time, sessionID, method string, params, result any) error {
	if c.sendErr != nil {
		return c.sendErr
	}
	id, err := c.write(deadline, sessionID, method, params)
	if err != nil {
		return err
	}
	for range maxMessagesPerCall {
		response, err := c.read(deadline)
		if err != nil {
			return fmt.Errorf("failed to read the response to %s: %w", method, err)
		}
		if response.ID == 0 {
			c.onEvent(response)
			continue
		}
		if c.unanswered[response.ID] {
			delete(c.unanswered, response.ID)
			continue
		}
		if response.ID != id {
			// Responses come in command order and calls never overlap, so
			// any other id is a protocol violation on the browser's side.
			return fmt.Errorf("response %d to %s arrived while waiting for %d", response.ID, method, id)
		}
		if response.Error != nil {
			return fmt.Errorf("%s: %w", method, response.Error)
		}
		if result == nil || len(response.Result) == 0 {
			return nil
		}
		if err := json.Unmarshal(response.Result, result); err != nil {
			return fmt.Errorf("failed to decode the result of %s: %w", method, err)
		}
		return nil
	}
	return fmt.Errorf("no response to %s within %d messages", method, maxMessagesPerCall)
}

// send issues a command without waiting for its response; the response is
// dropped when a later call or waitEvent reads it. Event handlers use it, as
// they run inside another call's read loop.
func (c *conn) send(sessionID, method string, params any) {
	id, err := c.write(time.Now().Add(10*time.Second), sessionID, method, params)
	if err != nil {
		if c.sendErr == nil {
			c.sendErr = err
		}
		return
	}
	c.unanswered[id] = true
}

// write sends one command and returns its id.
func (c *conn) write(deadline time.Time, sessionID, method string, params any) (int64, error) {
	c.nextID++
	command := message{ID: c.nextID, Method: method, SessionID: sessionID}
	if params != nil {
		encoded, err := json.Marshal(params)
		if err != nil {
			return 0, fmt.Errorf("failed to encode %s: %w", method, err)
		}
		command.Params = encoded
	}
	encoded, err := json.Marshal(command)
	if err != nil {
		return 0, fmt.Errorf("failed to encode %s: %w", method, err)
	}
	if err := c.toBrowser.SetWriteDeadline(deadline); err != nil {
		return 0, fmt.Errorf("failed to set write deadline: %w", err)
	}
	if _, err := c.toBrowser.Write(append(encoded, 0)); err != nil {
		return 0, fmt.Errorf("failed to send %s: %w", method, err)
	}
	return command.ID, nil
}

// waitEvent reads until an event named method arrives for sessionID (every
// event on the way, and that one, also go to onEvent).
func (c *conn) waitEvent(deadline time.Time, sessionID, method string) error {
	for range maxMessagesPerCall {
		event, err := c.read(deadline)
		if err != nil {
			return fmt.Errorf("failed waiting for %s: %w", method, err)
		}
		if c.unanswered[event.ID] {
			delete(c.unanswered, event.ID)
			continue
		}
		if event.ID != 0 {
			return fmt.Errorf("unexpected response %d while waiting for %s", event.ID, method)
		}
		c.onEvent(event)
		if event.Method == method && event.SessionID == sessionID {
			return nil
		}
	}
	return fmt.Errorf("no %s within %d messages", method, maxMessagesPerCall)
}

// read returns the next message from the browser.
func (c *conn) read(deadline time.Time) (message, error) {
	if err := c.fromBrowser.SetReadDeadline(deadline); err != nil {
		return message{}, fmt.Errorf("failed to set read deadline: %w", err)
	}
	var raw []byte
	for {
		chunk, err := c.reader.ReadSlice(0)
		raw = append(raw, chunk...)
		if len(raw) > maxMessageBytes {
			return message{}, errMessageTooLarge
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return message{}, err
		}
	}
	raw = bytes.TrimSuffix(raw, []byte{0})
	var decoded message
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return message{}, fmt.Errorf("failed to decode a DevTools message: %w", err)
	}
	return decoded, nil
}
