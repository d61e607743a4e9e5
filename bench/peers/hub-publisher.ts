/**
 * The one publisher the benches' local realtime hub accepts (bench/emulators.ts): publishes signed with these
 * credentials for this region verify, any other is refused as AppSync's IAM mode refuses it.
 */
export const HUB_PUBLISHER = { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } as const;
