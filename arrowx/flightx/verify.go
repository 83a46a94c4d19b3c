package flightx

import (
	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/dlpack-go/dlpack/arrowx/internal/ipcverify"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// streamPolicy is what a tensor stream may hold: schemas and uncompressed record batches, no
// dictionaries (see ipcverify: arrow-go's IPC reader trusts the headers it parses).
var streamPolicy = ipcverify.Policy{Batches: true}

// verifyHeader checks an IPC message header from the network (its body of maxBody bytes) before
// arrow-go reads it.
func verifyHeader(h []byte, maxBody int) error {
	if err := ipcverify.Header(h, maxBody, streamPolicy); err != nil {
		return errs.Errorf(ErrProtocol, "flightx: %v", err)
	}
	return nil
}

// verified passes on the messages of a stream whose headers verifyHeader accepts, and keeps
// the length of the last one's body, and the body itself until it is spent.
type verified struct {
	src  flight.DataStreamReader
	body int
	last []byte
}

// spent gives the last message's body to the body pool (recvbody.go): the receiver has copied
// what it needed of it and keeps nothing over it, and neither does arrow-go's reader once it
// reads the next message, the only use of the memory left.
func (v *verified) spent() {
	putBody(v.last)
	v.last = nil
}

func (v *verified) Recv() (*flight.FlightData, error) {
	fd, err := v.src.Recv()
	if err != nil {
		return nil, err
	}
	v.body, v.last = len(fd.GetDataBody()), fd.GetDataBody()
	if err := verifyHeader(fd.GetDataHeader(), len(fd.GetDataBody())); err != nil {
		return nil, err
	}
	return fd, nil
}

// verifySchemaBytes checks the serialized schema of a FlightInfo before arrow-go reads it.
func verifySchemaBytes(b []byte) error {
	if err := ipcverify.Schema(b, streamPolicy); err != nil {
		return errs.Errorf(ErrProtocol, "flightx: %v", err)
	}
	return nil
}
