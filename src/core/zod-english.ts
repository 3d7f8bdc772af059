import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

// zod/mini sets no locale (classic zod sets English when its first schema is built), so without this
// every message would read "Invalid input". Each module that builds a schema imports this file; a
// locale the program chose before is kept. The one locale file, not `zod/locales` (all of them).
if (config().localeError === undefined) config(en());
