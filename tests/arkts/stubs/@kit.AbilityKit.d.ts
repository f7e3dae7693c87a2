/*
 * Minimal stub of the AbilityKit kit: re-exports UIAbility only.
 *
 * Source: interface_sdk-js kits/@kit.AbilityKit.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */
import UIAbility from './@ohos.app.ability.UIAbility';

export { UIAbility };
