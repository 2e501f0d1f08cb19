// oidc-provider 9 ships no type declarations: the loopback OpenID provider of the tests
// (oidc-idp.ts) uses the few members it needs through this loose declaration.
declare module 'oidc-provider' {
  const Provider: any;
  export default Provider;
}
