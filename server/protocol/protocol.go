// Package protocol is cgcat's MCP face: the stdio server with exactly two
// tools, local_codegraph_projects and local_codegraph_resolve, their input
// and output schemas, the decoding of a call's JSON arguments into the
// typed arguments of package server, and the mapping of answers to tool
// results (R15–R17, R23).
//
// It answers nothing itself and decides nothing: package server does, for
// this face and the CLI alike. It never adds a tool, and never changes an
// answer on its way out: the structured result is the envelope as package
// server made it, and the text beside it is server.Text of the same
// envelope.
package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cgcat/cgcat/server"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// Tool names. They never change with the catalog.
const (
	ToolProjects = "local_codegraph_projects"
	ToolResolve  = "local_codegraph_resolve"
)

// Tools returns the two tool definitions. openWorld is true only when GBrain
// is on (the only network we may touch).
func Tools(openWorld bool) []mcp.Tool {
	annotate := func(title string) mcp.ToolOption {
		return mcp.WithToolAnnotation(mcp.ToolAnnotation{
			Title:           title,
			ReadOnlyHint:    mcp.ToBoolPtr(true),
			DestructiveHint: mcp.ToBoolPtr(false),
			IdempotentHint:  mcp.ToBoolPtr(true),
			OpenWorldHint:   mcp.ToBoolPtr(openWorld),
		})
	}
	return []mcp.Tool{
		rawTool(ToolProjects, projectsDescription, inputSchemaProjects, annotate("Find local CodeGraph projects")),
		rawTool(ToolResolve, resolveDescription, inputSchemaResolve, annotate("Resolve a CodeGraph project id")),
	}
}

// rawTool builds a tool whose input and output schemas are our own JSON
// text. mcp.NewTool would also set a default structured InputSchema, and a
// tool with both cannot be marshalled: tools/list would fail.
func rawTool(name, description, input string, opts ...mcp.ToolOption) mcp.Tool {
	t := mcp.NewToolWithRawSchema(name, description, json.RawMessage(input))
	t.RawOutputSchema = json.RawMessage(outputSchema)
	for _, o := range opts {
		o(&t)
	}
	return t
}

// New builds the MCP server over a frontend.
func New(f *server.Frontend, version string, opts ...mcpserver.ServerOption) *mcpserver.MCPServer {
	opts = append([]mcpserver.ServerOption{
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithRecovery(),
		mcpserver.WithInstructions(Instructions),
	}, opts...)
	s := mcpserver.NewMCPServer("cgcat", version, opts...)
	tools := Tools(f.OpenWorld())
	s.AddTool(tools[0], func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := argsOf(req)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		a, err := ParseProjects(args)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return result(f.Projects(ctx, a))
	})
	s.AddTool(tools[1], func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := argsOf(req)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		a, err := ParseResolve(args)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return result(f.Resolve(ctx, a))
	})
	return s
}

// argsOf returns a call's arguments. Absent arguments are an empty object;
// anything but an object is refused in our words (mcp-go would hand the
// handler nil, silently turning a bad call into a default listing).
func argsOf(req mcp.CallToolRequest) (map[string]any, error) {
	switch a := req.Params.Arguments.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return a, nil
	}
	return nil, &server.ArgError{Problem: `arguments must be a JSON object, like {"query": "order-sdk"}`}
}

// result maps an answer to a tool result. An internal fault is an explicit
// tool error that says retrying will not help (R22).
func result(e *server.Envelope, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		msg := fmt.Sprintf("cgcat could not answer: %v. Retrying will not help until this is fixed; run `cgcat doctor` for a diagnosis.", err)
		if errors.Is(err, context.Canceled) {
			msg = "the call was cancelled"
		}
		return mcp.NewToolResultError(msg), nil
	}
	return mcp.NewToolResultStructured(e, server.Text(e)), nil
}
