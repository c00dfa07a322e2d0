package apiserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubetab/kubetab/core/apiserver/authz"
)

// Authentication: who is asking. kube-apiserver asks its authenticators in
// turn (k8s.io/apiserver/pkg/authentication/request/union): client
// certificates, bearer tokens (a static token file, ServiceAccount tokens,
// OIDC ...), and, when none of them recognises any credential, the
// anonymous authenticator (pkg/kubeapiserver/authenticator/config.go):
//
//	Authorization: Bearer <token>  ──▶ the token's user, + system:authenticated
//	  a token nobody knows          ──▶ 401 Unauthorized, whatever follows
//	no credentials                  ──▶ system:anonymous in system:unauthenticated
//
// A bad token is not anonymous: kubectl with a wrong token gets 401, which
// it prints as "error: You must be logged in to the server (Unauthorized)".
// Anonymous requests then meet RBAC like anyone else: the bootstrap policy
// gives system:unauthenticated only system:public-info-viewer (/healthz,
// /livez, /readyz, /version); even discovery needs a login since 1.14.
//
// kubetab knows bearer tokens only: `kubetab cluster` makes a random token
// for the administrator at start and writes it into the kubeconfig it
// writes (upstream's static token file, --token-auth-file, in one line).
// The token is checked in constant time and removed from the request once
// it is recognised, as upstream does, so nothing behind the API server (a
// pod reached through pods/proxy) ever sees it.

// TokenAuthenticator finds the user of a bearer token (upstream:
// authenticator.Token). ok is false when the token is not one it knows.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (u *authz.User, ok bool, err error)
}

// StaticTokens is a fixed table of tokens and their users, upstream's
// --token-auth-file (pkg/authentication/token/tokenfile).
type StaticTokens map[string]*authz.User

var _ TokenAuthenticator = StaticTokens(nil)

// AuthenticateToken returns the user of token. Every entry is compared in
// constant time, so how long it takes says nothing about the tokens.
func (t StaticTokens) AuthenticateToken(_ context.Context, token string) (*authz.User, bool, error) {
	sum := sha256.Sum256([]byte(token))
	var found *authz.User
	for k, u := range t {
		ks := sha256.Sum256([]byte(k))
		if subtle.ConstantTimeCompare(sum[:], ks[:]) == 1 {
			found = u
		}
	}
	return found, found != nil, nil
}

// TokenUnion asks each authenticator in turn (upstream: the union
// authenticator); the first that knows the token wins.
type TokenUnion []TokenAuthenticator

// AuthenticateToken asks each authenticator; errors are kept only when
// nobody knows the token.
func (us TokenUnion) AuthenticateToken(ctx context.Context, token string) (*authz.User, bool, error) {
	var errs []error
	for _, a := range us {
		u, ok, err := a.AuthenticateToken(ctx, token)
		if ok {
			return u, true, nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return nil, false, errors.Join(errs...)
}

// anonymousUser is every request that brings no credentials.
var anonymousUser = &authz.User{Name: authz.Anonymous, Groups: []string{authz.GroupUnauthenticated}}

// errInvalidToken is why a bearer token nobody knows is refused (upstream's
// bearertoken.invalidToken).
var errInvalidToken = errors.New("invalid bearer token")

// authenticateRequest is the authentication filter's decision: the user of
// the request's bearer token, anonymous without one, or an error (401).
// Without Config.Tokens the server has no authentication at all: every
// request is Admin, as kube-apiserver's insecure port (removed in 1.20)
// served; only a library's own tests build such a server.
func (s *Server) authenticateRequest(r *http.Request) (*authz.User, error) {
	if s.cfg.Tokens == nil {
		return Admin, nil
	}
	token, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return anonymousUser, nil
	}
	u, ok, err := s.cfg.Tokens.AuthenticateToken(r.Context(), token)
	if !ok {
		if err == nil {
			err = errInvalidToken
		}
		return nil, err
	}
	return withAuthenticatedGroup(u), nil
}

// bearerToken reads "Bearer <token>" (upstream: request/bearertoken). A
// header of another scheme, or an empty token, is no credential at all.
func bearerToken(h string) (string, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return "", false
	}
	scheme, token, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token, _, _ = strings.Cut(token, " ")
	return token, token != ""
}

// withAuthenticatedGroup adds system:authenticated to an authenticated
// user (upstream: group.AuthenticatedGroupAdder).
func withAuthenticatedGroup(u *authz.User) *authz.User {
	if u.InGroup(authz.GroupAuthenticated) || u.InGroup(authz.GroupUnauthenticated) {
		return u
	}
	out := *u
	out.Groups = append(append(make([]string, 0, len(u.Groups)+1), u.Groups...), authz.GroupAuthenticated)
	return &out
}

// unauthorized is the answer to a request whose credentials nobody knows
// (upstream: filters.Unauthorized): 401 with the Status kubectl prints as
// "error: You must be logged in to the server (Unauthorized)".
func unauthorized() error { return apierrors.NewUnauthorized("Unauthorized") }
