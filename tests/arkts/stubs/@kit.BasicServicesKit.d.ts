/*
 * Minimal stub of interface_sdk-js kits/@kit.BasicServicesKit.d.ts: re-exports the
 * @ohos.base types only.
 */
import { AsyncCallback, BusinessError, Callback, ErrorCallback } from './@ohos.base';

export { AsyncCallback, BusinessError, Callback, ErrorCallback };
