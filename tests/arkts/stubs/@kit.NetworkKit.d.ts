/*
 * Minimal stub of interface_sdk-js kits/@kit.NetworkKit.d.ts: like the real kit file it
 * only re-exports the @ohos.* modules (here just http).
 */
import http from './@ohos.net.http';

export { http };
