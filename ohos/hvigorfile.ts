// Project-level build script: hvigor's built-in app tasks (assembleHap, assembleHar, assembleApp
// over the modules of build-profile.json5).
import { appTasks } from '@ohos/hvigor-ohos-plugin';

export default {
  system: appTasks,  /* Built-in plugin of Hvigor. It cannot be modified. */
  plugins: []        /* Custom plugin to extend the functionality of Hvigor. */
}
