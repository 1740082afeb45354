// 10-schema.js — argument validation against a tool's input schema.
//
// Owns `validateSchema(schema, value)` → `[{path, message}]` (empty when valid), a JSON Schema
// subset: type (incl. integer), properties, required, additionalProperties, patternProperties,
// enum, const, anyOf, oneOf, allOf, minimum, maximum, exclusiveMinimum, exclusiveMaximum (number
// and draft-4 boolean forms), multipleOf, minLength, maxLength (in code points), pattern (Unicode),
// format date / time / date-time / email, items (schema or tuple), prefixItems, minItems,
// maxItems, uniqueItems. Unknown keywords are ignored, as JSON Schema says; a schema that cannot
// be applied (an invalid `pattern`) fails the call rather than letting arguments through.
// `path` is a JSON pointer into the arguments ('' is the whole object).

const MAX_SCHEMA_DEPTH = 64;
const patternCache = new Map();

function validateSchema(schema, value) {
  const problems = [];
  checkValue(schema, value, '', problems, 0);
  return problems;
}

function pointer(path, key) {
  return `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

function isPlainObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function typeMatches(type, value) {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'null':
      return value === null;
    default:
      return true;
  }
}

function describeValue(value) {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  if (typeof value === 'number' && Number.isInteger(value)) {
    return 'an integer';
  }
  return `a ${typeof value}`;
}

/** Equality of two JSON values, ignoring key order. */
function sameJson(left, right) {
  if (left === right) {
    return true;
  }
  if (Array.isArray(left) && Array.isArray(right)) {
    return left.length === right.length && left.every((item, index) => sameJson(item, right[index]));
  }
  if (isPlainObject(left) && isPlainObject(right)) {
    const keys = Object.keys(left);
    return keys.length === Object.keys(right).length
      && keys.every((key) => Object.prototype.hasOwnProperty.call(right, key) && sameJson(left[key], right[key]));
  }
  return false;
}

function checkValue(schema, value, path, problems, depth) {
  if (schema === true || schema === undefined || schema === null) {
    return;
  }
  if (schema === false) {
    problems.push({ path, message: 'no value is allowed here' });
    return;
  }
  if (typeof schema !== 'object' || Array.isArray(schema)) {
    return;
  }
  if (depth > MAX_SCHEMA_DEPTH) {
    problems.push({ path, message: 'is nested too deeply' });
    return;
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((type) => typeMatches(type, value))) {
      problems.push({ path, message: `must be ${types.join(' or ')}, not ${describeValue(value)}` });
      return;
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => sameJson(allowed, value))) {
    problems.push({ path, message: `must be one of ${JSON.stringify(schema.enum)}` });
  }
  if (Object.prototype.hasOwnProperty.call(schema, 'const') && !sameJson(schema.const, value)) {
    problems.push({ path, message: `must be ${JSON.stringify(schema.const)}` });
  }
  checkCombinators(schema, value, path, problems, depth);
  if (typeof value === 'number') {
    checkNumber(schema, value, path, problems);
  } else if (typeof value === 'string') {
    checkString(schema, value, path, problems);
  } else if (Array.isArray(value)) {
    checkArray(schema, value, path, problems, depth);
  } else if (isPlainObject(value)) {
    checkObject(schema, value, path, problems, depth);
  }
}

function matches(schema, value, depth) {
  const problems = [];
  checkValue(schema, value, '', problems, depth + 1);
  return problems.length === 0;
}

function checkCombinators(schema, value, path, problems, depth) {
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf) {
      checkValue(part, value, path, problems, depth + 1);
    }
  }
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some((part) => matches(part, value, depth))) {
    problems.push({ path, message: 'does not match any of the allowed alternatives' });
  }
  if (Array.isArray(schema.oneOf)) {
    const count = schema.oneOf.filter((part) => matches(part, value, depth)).length;
    if (count !== 1) {
      problems.push({
        path,
        message: count === 0
          ? 'does not match any of the allowed alternatives'
          : 'matches more than one of the exclusive alternatives',
      });
    }
  }
}

function checkNumber(schema, value, path, problems) {
  const exclusiveMin = schema.exclusiveMinimum;
  const exclusiveMax = schema.exclusiveMaximum;
  if (typeof schema.minimum === 'number') {
    if (exclusiveMin === true ? value <= schema.minimum : value < schema.minimum) {
      problems.push({ path, message: `must be ${exclusiveMin === true ? '>' : '>='} ${schema.minimum}` });
    }
  }
  if (typeof schema.maximum === 'number') {
    if (exclusiveMax === true ? value >= schema.maximum : value > schema.maximum) {
      problems.push({ path, message: `must be ${exclusiveMax === true ? '<' : '<='} ${schema.maximum}` });
    }
  }
  if (typeof exclusiveMin === 'number' && value <= exclusiveMin) {
    problems.push({ path, message: `must be > ${exclusiveMin}` });
  }
  if (typeof exclusiveMax === 'number' && value >= exclusiveMax) {
    problems.push({ path, message: `must be < ${exclusiveMax}` });
  }
  if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0) {
    const quotient = value / schema.multipleOf;
    if (Math.abs(quotient - Math.round(quotient)) > 1e-9 * Math.max(1, Math.abs(quotient))) {
      problems.push({ path, message: `must be a multiple of ${schema.multipleOf}` });
    }
  }
}

function checkString(schema, value, path, problems) {
  const length = Array.from(value).length;
  if (typeof schema.minLength === 'number' && length < schema.minLength) {
    problems.push({ path, message: `must be at least ${schema.minLength} characters long` });
  }
  if (typeof schema.maxLength === 'number' && length > schema.maxLength) {
    problems.push({ path, message: `must be at most ${schema.maxLength} characters long` });
  }
  if (typeof schema.pattern === 'string') {
    const pattern = compilePattern(schema.pattern);
    if (pattern === null) {
      problems.push({ path, message: 'cannot be checked: the schema pattern is not a valid regular expression' });
    } else if (!pattern.test(value)) {
      problems.push({ path, message: `must match the pattern ${schema.pattern}` });
    }
  }
  if (typeof schema.format === 'string' && FORMATS[schema.format] && !FORMATS[schema.format](value)) {
    problems.push({ path, message: `must be a valid ${schema.format}` });
  }
}

function compilePattern(source) {
  if (!patternCache.has(source)) {
    let compiled = null;
    try {
      compiled = new RegExp(source, 'u');
    } catch (error) {
      compiled = null;
    }
    patternCache.set(source, compiled);
  }
  return patternCache.get(source);
}

function validDate(year, month, day) {
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return date.getUTCFullYear() === Number(year) && date.getUTCMonth() === Number(month) - 1
    && date.getUTCDate() === Number(day);
}

const TIME = '([01]\\d|2[0-3]):([0-5]\\d)(:([0-5]\\d|60)(\\.\\d+)?)?(Z|z|[+-]([01]\\d|2[0-3]):[0-5]\\d)?';
const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_PATTERN = new RegExp(`^${TIME}$`);
const DATE_TIME_PATTERN = new RegExp(`^(\\d{4})-(\\d{2})-(\\d{2})[Tt ]${TIME}$`);
const EMAIL_PATTERN = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)*$/;

// Times follow RFC 3339, relaxed the way HTML inputs write them: seconds and the offset may be
// left out (`<input type=time>` gives "14:30", `datetime-local` gives "2026-05-01T14:30").
const FORMATS = {
  date: (value) => {
    const parts = DATE_PATTERN.exec(value);
    return parts !== null && validDate(parts[1], parts[2], parts[3]);
  },
  time: (value) => TIME_PATTERN.test(value),
  'date-time': (value) => {
    const parts = DATE_TIME_PATTERN.exec(value);
    return parts !== null && validDate(parts[1], parts[2], parts[3]);
  },
  email: (value) => EMAIL_PATTERN.test(value),
};

function checkArray(schema, value, path, problems, depth) {
  if (typeof schema.minItems === 'number' && value.length < schema.minItems) {
    problems.push({ path, message: `must have at least ${schema.minItems} items` });
  }
  if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) {
    problems.push({ path, message: `must have at most ${schema.maxItems} items` });
  }
  const positional = Array.isArray(schema.prefixItems) ? schema.prefixItems
    : Array.isArray(schema.items) ? schema.items : [];
  const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
  value.forEach((item, index) => {
    const itemSchema = index < positional.length ? positional[index] : rest;
    checkValue(itemSchema, item, pointer(path, index), problems, depth + 1);
  });
  if (schema.uniqueItems === true) {
    const duplicate = value.findIndex((item, index) => value.slice(0, index).some((earlier) => sameJson(earlier, item)));
    if (duplicate !== -1) {
      problems.push({ path: pointer(path, duplicate), message: 'repeats an earlier item' });
    }
  }
}

function checkObject(schema, value, path, problems, depth) {
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  if (Array.isArray(schema.required)) {
    for (const key of schema.required) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) {
        problems.push({ path: pointer(path, key), message: 'is required' });
      }
    }
  }
  const patterns = isPlainObject(schema.patternProperties) ? Object.entries(schema.patternProperties) : [];
  for (const [key, item] of Object.entries(value)) {
    const itemPath = pointer(path, key);
    let known = false;
    if (Object.prototype.hasOwnProperty.call(properties, key)) {
      known = true;
      checkValue(properties[key], item, itemPath, problems, depth + 1);
    }
    for (const [source, itemSchema] of patterns) {
      const pattern = compilePattern(source);
      if (pattern !== null && pattern.test(key)) {
        known = true;
        checkValue(itemSchema, item, itemPath, problems, depth + 1);
      }
    }
    if (!known && schema.additionalProperties === false) {
      problems.push({ path: itemPath, message: 'is not an allowed property' });
    } else if (!known && isPlainObject(schema.additionalProperties)) {
      checkValue(schema.additionalProperties, item, itemPath, problems, depth + 1);
    }
  }
}
