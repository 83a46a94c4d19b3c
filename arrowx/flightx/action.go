package flightx

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// ActionDelete is the Flight action (DoAction) that deletes the tensor, or list of tensors,
// named by its body: Client.Delete sends it. It needs a read-write token on a server with
// WithTokens.
const ActionDelete = "delete"

// DoAction runs the action ActionDelete: it removes and releases the tensor named by the body
// (gRPC NotFound when there is none) and answers with one empty result. Other actions are
// InvalidArgument.
func (s *Server) DoAction(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	if a.GetType() != ActionDelete {
		return status.Errorf(codes.InvalidArgument, "flightx: unknown action %q (the server knows %q)", a.GetType(), ActionDelete)
	}
	name := string(a.GetBody())
	if err := checkName(name); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	if !s.remove(name) {
		return status.Errorf(codes.NotFound, "flightx: no tensor %q", name)
	}
	return stream.Send(&flight.Result{})
}

// ListActions lists the one action of the server, ActionDelete.
func (s *Server) ListActions(_ *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	return stream.Send(&flight.ActionType{Type: ActionDelete, Description: "delete the tensor named by the body"})
}

// Delete removes the tensor, or list of tensors, called name from the server (the action
// ActionDelete): ErrNotFound when there is none, ErrPermission with a read-only token.
func (c *Client) Delete(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.fc.DoAction(ctx, &flight.Action{Type: ActionDelete, Body: []byte(name)})
	if err != nil {
		return wrapf(transportErr(err), "delete %q", name)
	}
	for i := 0; ; i++ {
		_, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return wrapf(transportErr(err), "delete %q", name)
		}
		if i >= 16 {
			return errs.Errorf(ErrProtocol, "flightx: the server sent more than 16 results to delete %q", name)
		}
	}
}
