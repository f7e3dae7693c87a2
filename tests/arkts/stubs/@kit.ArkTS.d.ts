/*
 * Minimal stub of interface_sdk-js kits/@kit.ArkTS.d.ts: re-exports util only.
 */
import util from './@ohos.util';

export { util };
