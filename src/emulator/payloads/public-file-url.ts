/** service.md §4.6: a public link on the service's own host, needing no Authorization. */
export function publicFileUrl(baseUrl: string, file: { readonly fileId: string; readonly name: string }): string {
  return `${baseUrl}/drive/file/public/${encodeURIComponent(file.fileId)}/${encodeURIComponent(file.name)}`;
}
