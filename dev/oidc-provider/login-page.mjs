/**
 * The provider's login page: a name, and in test mode an e-mail and whether the provider vouches
 * for it. Labels name each field, which is how a browser test fills them.
 */
export function loginPage({ uid, client, mode, error }) {
  const testFields =
    mode === 'test'
      ? `<p><label for="email">E-mail</label> <input id="email" name="email" type="email"></p>
  <p><input id="email_verified" name="email_verified" type="checkbox"> <label for="email_verified">E-mail verified</label></p>`
      : '<p>Any name will do: this provider is for development, and vouches for no address.</p>';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in to the ${mode} provider</title></head>
<body>
<h1>Sign in to the ${mode} provider</h1>
<p>${escapeHtml(client)} asks who you are.</p>
${error ? `<p role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/interaction/${escapeHtml(uid)}/login">
  <p><label for="name">Name</label> <input id="name" name="name" autofocus></p>
  ${testFields}
  <p><button type="submit">Sign in</button></p>
</form>
</body>
</html>`;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
