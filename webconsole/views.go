package webconsole

import "net/http"

// Views are the read-only pages besides the approvals: filled in app.
type Views interface{}

// viewRoutes adds the audit, conversations and cluster pages.
func (c *Console) viewRoutes(mux *http.ServeMux) {}
