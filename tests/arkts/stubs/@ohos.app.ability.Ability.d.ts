/*
 * Minimal stub of @ohos.app.ability.Ability: the base class of UIAbility (no member used).
 *
 * Source: interface_sdk-js api/@ohos.app.ability.Ability.d.ts @ OpenHarmony-v5.0.0-Release
 *   (https://github.com/openharmony/interface_sdk-js, API 12, the HAR's minimum).
 * Every declaration here has the signature of that file (names, parameter and return
 * types, optionality); scripts/arkts-lint/check-stubs.js --sdk <checkout> verifies it.
 */

export default class Ability {}
