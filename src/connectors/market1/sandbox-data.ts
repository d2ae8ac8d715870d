/**
 * The Market1 sandbox's data (P95): deterministic, realistic, generated from seeded PRNGs.
 *
 * - The subjects dictionary (shared by every account): the catalog sample's five subjects with their
 *   parameters (`src/modules/catalog/sample-dictionary.json`, as Market1's wire can express them: strings and
 *   numbers) plus ~60 generated subjects under nine parent categories, each with commissions; and the published
 *   directories of values (colors, kinds, countries, seasons, VAT rates) that characteristics named as the
 *   document names them draw from (P178).
 * - One advertising account per API key, seeded by the key (two organizations see different, stable
 *   accounts): 150–200 products, 220–340 campaigns of every kind the document lists (type 8, type 9 with a
 *   unified or a manual bid) and every documented status, a balance.
 * - Daily statistics per campaign, product and day: a pure function of (key, campaign, product, day), so the
 *   same day always has the same numbers; available for the 180 marketplace calendar days (Moscow) ending
 *   today while the campaign was showing. Numbers are consistent: clicks ≤ views, orders ≤ clicks, ordered
 *   items ≥ orders, cancelled ≤ ordered items, expenses = views × CPM / 1000 (CPC campaigns: clicks × bid),
 *   CPC = expenses / clicks, orders amount = ordered items × price.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { DictionaryFile } from '../../modules/catalog/dictionary.ts';
import {
  CHARACTERISTIC_DIRECTORIES,
  type DirectoryName,
  MARKETPLACE_OFFSET_MS,
  marketplaceTimestamp,
  STATUS_CODES_WITH_STATISTICS,
  type WireCampaign,
  type WireCampaignStatistics,
  type WireCounters,
  type WireDayCounters,
  type WireProductCounters,
} from './protocol.ts';

/** Days of statistics kept, ending today (the marketplace's calendar day). */
export const STATISTICS_DAYS = 180;
const DAY_MS = 86_400_000;

/** A pseudo-random generator in [0, 1) seeded by SHA-256 of `parts` (mulberry32). */
export function seededRandom(...parts: (string | number)[]): () => number {
  let state = createHash('sha256').update(parts.join('|')).digest().readUInt32LE(0);
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const between = (random: () => number, min: number, max: number) =>
  min + Math.floor(random() * (max - min + 1));
const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const round2 = (value: number) => Math.round(value * 100) / 100;

// ---- Dictionary --------------------------------------------------------------------------------------------

/** A characteristic of a sandbox subject; `directory` when its name links it to one (P178). */
export interface SandboxCharacteristic {
  id: number;
  name: string;
  /** 1 string(s), 4 number(s). */
  charcType: 1 | 4;
  required: boolean;
  unitName: string;
  /** 0 = unlimited. */
  maxCount: number;
  popular: boolean;
  directory?: DirectoryName;
}

/** A subject with its commissions (percent) and characteristics. */
export interface SandboxSubject {
  id: number;
  name: string;
  parentId: number;
  parentName: string;
  commissions: {
    paidStorageKgvp: number;
    kgvpMarketplace: number;
    kgvpSupplier: number;
    kgvpSupplierExpress: number;
    kgvpPickup: number;
    kgvpBooking: number;
  };
  characteristics: SandboxCharacteristic[];
}

const PARENTS: Record<number, string> = {
  100: 'Apparel',
  300: 'Footwear',
  500: 'Beauty',
  700: 'Kids',
  900: 'Sports',
  1100: 'Electronics accessories',
  2200: 'Bath',
  2300: 'Bedroom',
  2400: 'Home decor',
};

const GENERATED_SUBJECTS: Record<number, string[]> = {
  100: ['Shirts', 'Hoodies', 'Jeans', 'Skirts', 'Jackets', 'Sweaters', 'Shorts', 'Socks'],
  300: ['Sneakers', 'Boots', 'Sandals', 'Slippers', 'Loafers'],
  500: ['Face creams', 'Shampoos', 'Lipsticks', 'Perfumes', 'Hair masks', 'Nail polish'],
  700: ['Baby bodysuits', 'Kids pajamas', 'Toy cars', 'Building blocks', 'Plush toys', 'School backpacks'],
  900: ['Yoga mats', 'Dumbbells', 'Sports bottles', 'Jump ropes', 'Fitness bands', 'Cycling gloves'],
  1100: ['Phone cases', 'Charging cables', 'Screen protectors', 'Power banks', 'Earphones', 'Phone holders'],
  2200: ['Bathrobes', 'Shower curtains', 'Bath mats', 'Soap dishes', 'Toothbrush holders'],
  2300: ['Pillows', 'Blankets', 'Mattress toppers', 'Duvet covers', 'Sleep masks'],
  2400: ['Vases', 'Photo frames', 'Wall clocks', 'Artificial flowers', 'Decorative pillows', 'Figurines'],
};

/** Colors of product names. */
const COLORS = ['white', 'black', 'grey', 'navy', 'red', 'beige', 'green', 'blue', 'pink', 'yellow', 'brown'];

/** The published directories' entries (`GET /content/v2/directory/…`), in their wire shapes. */
export const SANDBOX_DIRECTORIES = {
  colors: [
    ['white', 'white'],
    ['black', 'black'],
    ['grey', 'grey'],
    ['navy', 'blue'],
    ['red', 'red'],
    ['beige', 'brown'],
    ['green', 'green'],
    ['olive', 'green'],
    ['blue', 'blue'],
    ['pink', 'red'],
    ['yellow', 'yellow'],
    ['brown', 'brown'],
  ].map(([name, parentName]) => ({ name: name!, parentName: parentName! })),
  kinds: ['Men', 'Women', 'Unisex', 'Boys', 'Girls'],
  countries: [
    ['Russia', 'Russian Federation'],
    ['China', "People's Republic of China"],
    ['Turkey', 'Republic of Türkiye'],
    ['Uzbekistan', 'Republic of Uzbekistan'],
    ['Kyrgyzstan', 'Kyrgyz Republic'],
    ['Belarus', 'Republic of Belarus'],
    ['Bangladesh', "People's Republic of Bangladesh"],
    ['India', 'Republic of India'],
    ['Vietnam', 'Socialist Republic of Viet Nam'],
  ].map(([name, fullName]) => ({ name: name!, fullName: fullName! })),
  seasons: ['all-season', 'summer', 'demi-season', 'winter'],
  vat: ['0', '10', '20', 'Без НДС', '13'],
} as const satisfies Record<DirectoryName, readonly unknown[]>;

/** The name the document gives the characteristic of a directory ("Цвет" for colors, …). */
const NAME_OF_DIRECTORY = Object.fromEntries(
  Object.entries(CHARACTERISTIC_DIRECTORIES).map(([name, directory]) => [directory, name]),
) as Record<DirectoryName, string>;

/** The catalog sample's parameters that the marketplace's directories serve, by their name in the sample. */
const SAMPLE_DIRECTORIES: Readonly<Record<string, DirectoryName>> = {
  Color: 'colors',
  Gender: 'kinds',
  'Country of manufacture': 'countries',
  Season: 'seasons',
};

const SEASONAL_PARENTS = new Set([100, 300, 700, 900]);

function commissionsOf(subjectId: number): SandboxSubject['commissions'] {
  const random = seededRandom('commission', subjectId);
  const fbw = between(random, 8, 25) + pick(random, [0, 0.5]);
  return {
    paidStorageKgvp: fbw,
    kgvpMarketplace: fbw + 2,
    kgvpSupplier: fbw + 1,
    kgvpSupplierExpress: fbw + 3,
    kgvpPickup: fbw + 1,
    kgvpBooking: fbw + 1,
  };
}

/**
 * The catalog sample's subjects as Market1 expresses them: INTEGER → number, BOOLEAN → string; a parameter a
 * published directory serves carries the document's name and that directory, other `SUGGEST` parameters are
 * free input there (the marketplace publishes no values for them).
 */
function sampleSubjects(): SandboxSubject[] {
  const sample = JSON.parse(
    readFileSync(new URL('../../modules/catalog/sample-dictionary.json', import.meta.url), 'utf8'),
  ) as DictionaryFile;
  return sample.categories.map((category) => {
    const parentId = category.parentId ?? 0;
    return {
      id: category.id,
      name: category.name,
      parentId,
      parentName: PARENTS[parentId] ?? '',
      commissions: commissionsOf(category.id),
      characteristics: category.parameters.map((parameter) => {
        const directory = SAMPLE_DIRECTORIES[parameter.name];
        return {
          id: parameter.id,
          name: directory ? NAME_OF_DIRECTORY[directory] : parameter.name,
          charcType: parameter.valueType === 'NUMBER' || parameter.valueType === 'INTEGER' ? 4 : 1,
          required: parameter.required,
          unitName: parameter.unit ?? '',
          maxCount: parameter.multiValueAllowed ? 0 : 1,
          popular: parameter.required,
          ...(directory && { directory }),
        };
      }),
    };
  });
}

function generatedSubject(id: number, name: string, parentId: number): SandboxSubject {
  const charc = (index: number) => 30_000_000 + id * 100 + index;
  const characteristics: SandboxCharacteristic[] = [
    {
      id: charc(1),
      name: NAME_OF_DIRECTORY.colors,
      charcType: 1,
      required: true,
      unitName: '',
      maxCount: 5,
      popular: true,
      directory: 'colors',
    },
    {
      id: charc(2),
      name: NAME_OF_DIRECTORY.countries,
      charcType: 1,
      required: true,
      unitName: '',
      maxCount: 1,
      popular: false,
      directory: 'countries',
    },
    {
      id: charc(3),
      name: 'Composition',
      charcType: 1,
      required: false,
      unitName: '',
      maxCount: 0,
      popular: true,
    },
    {
      id: charc(4),
      name: 'Package weight',
      charcType: 4,
      required: true,
      unitName: 'g',
      maxCount: 1,
      popular: false,
    },
    {
      id: charc(5),
      name: 'Length',
      charcType: 4,
      required: false,
      unitName: 'cm',
      maxCount: 1,
      popular: false,
    },
  ];
  if (SEASONAL_PARENTS.has(parentId))
    characteristics.push(
      {
        id: charc(6),
        name: NAME_OF_DIRECTORY.seasons,
        charcType: 1,
        required: false,
        unitName: '',
        maxCount: 1,
        popular: false,
        directory: 'seasons',
      },
      {
        id: charc(7),
        name: NAME_OF_DIRECTORY.kinds,
        charcType: 1,
        required: false,
        unitName: '',
        maxCount: 1,
        popular: false,
        directory: 'kinds',
      },
    );
  characteristics.push({
    id: charc(8),
    name: NAME_OF_DIRECTORY.vat,
    charcType: 1,
    required: false,
    unitName: '',
    maxCount: 1,
    popular: false,
    directory: 'vat',
  });
  return {
    id,
    name,
    parentId,
    parentName: PARENTS[parentId]!,
    commissions: commissionsOf(id),
    characteristics,
  };
}

function buildSubjects(): SandboxSubject[] {
  const subjects = sampleSubjects();
  let id = 3000;
  for (const [parentId, names] of Object.entries(GENERATED_SUBJECTS))
    for (const name of names) subjects.push(generatedSubject((id += 7), name, Number(parentId)));
  return subjects.sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
}

/** Every subject of the sandbox, by name (the content API's order). */
export const SANDBOX_SUBJECTS: readonly SandboxSubject[] = buildSubjects();

/** The parent categories of the subjects. */
export const SANDBOX_PARENTS: readonly { id: number; name: string }[] = Object.entries(PARENTS).map(
  ([id, name]) => ({ id: Number(id), name }),
);

const subjectById = new Map(SANDBOX_SUBJECTS.map((subject) => [subject.id, subject]));

/** A subject by id. */
export function findSubject(id: number): SandboxSubject | undefined {
  return subjectById.get(id);
}

// ---- Accounts ----------------------------------------------------------------------------------------------

/** A product (nm) of an account. Price in roubles. */
export interface SandboxProduct {
  nmId: number;
  subjectId: number;
  name: string;
  price: number;
}

/**
 * A campaign of an account, mutable by start/pause/stop/deposit. `periods` are the marketplace's calendar days
 * (`dayOf`) when it was showing: `[from, to]`, `to` null while it still shows.
 */
export interface SandboxCampaign {
  advertId: number;
  name: string;
  /** 8 (unified bid, outdated) or 9. */
  type: number;
  bidType: 'unified' | 'manual';
  status: number;
  createTime: number;
  changeTime: number;
  startTime: number | null;
  endTime: number | null;
  /** Budget, whole roubles (a start from status 4 needs one). */
  budget: number;
  paymentType: 'cpm' | 'cpc';
  /** Bid in roubles: per thousand views (cpm) or per click (cpc). */
  bid: number;
  subjectId: number;
  nms: number[];
  periods: [number, number | null][];
  /** Views per product and day at full strength. */
  reach: number;
  /** Click-through ratio, 0–1. */
  clickRatio: number;
}

/** An account: what one API key sees. */
export interface SandboxAccount {
  /** Fingerprint of the key that seeds it. */
  seed: string;
  products: Map<number, SandboxProduct>;
  campaigns: Map<number, SandboxCampaign>;
  /** Whole roubles. */
  balance: { balance: number; net: number; bonus: number };
  nextCampaignId: number;
}

/** Kinds of campaigns: the type code and bid type (0 = type 8, 1 = type 9 unified, 2 = type 9 manual). */
const KINDS = [
  { type: 8, bidType: 'unified', label: 'unified (legacy)' },
  { type: 9, bidType: 'unified', label: 'unified' },
  { type: 9, bidType: 'manual', label: 'manual' },
] as const;
const KIND_ORDER = [0, 1, 2, 1, 2, 1] as const;
const STATUS_CODES = [-1, 4, 7, 8, 9, 11] as const;
const KIND_WEIGHTS: [number, number][] = [
  [0, 15],
  [1, 45],
  [2, 40],
];
const STATUS_WEIGHTS: [number, number][] = [
  [9, 30],
  [11, 17],
  [7, 33],
  [4, 9],
  [8, 6],
  [-1, 5],
];
const STYLES = ['basic', 'classic', 'premium', 'eco', 'sport', 'soft', 'compact', 'travel', 'home', 'kids'];

function weighted(random: () => number, weights: [number, number][]): number {
  let roll = random() * weights.reduce((sum, [, weight]) => sum + weight, 0);
  for (const [value, weight] of weights) if ((roll -= weight) < 0) return value;
  return weights[0]![0];
}

/**
 * The marketplace's calendar day (Moscow) of `time`, as the ms of that date's midnight in UTC (so
 * `new Date(day).toISOString().slice(0, 10)` is the Moscow date, as the statistics answer writes it).
 */
export function dayOf(time: number): number {
  return Math.floor((time + MARKETPLACE_OFFSET_MS) / DAY_MS) * DAY_MS;
}

/** The first instant of the marketplace day `day` (`dayOf`), in ms. */
export function dayStart(day: number): number {
  return day - MARKETPLACE_OFFSET_MS;
}

/** Generates the account of the key fingerprint `seed` as it is today (`now`). */
export function generateAccount(seed: string, now = Date.now()): SandboxAccount {
  const random = seededRandom('account', seed);
  const today = dayOf(now);
  const subjects = Array.from({ length: 14 }, () => pick(random, SANDBOX_SUBJECTS));
  const products = new Map<number, SandboxProduct>();
  const productCount = between(random, 150, 200);
  while (products.size < productCount) {
    const subject = pick(random, subjects);
    const nmId = between(random, 10_000_000, 99_000_000);
    products.set(nmId, {
      nmId,
      subjectId: subject.id,
      name: `${subject.name} ${pick(random, STYLES)} ${pick(random, COLORS)}`,
      price: between(random, 299, 8999) + pick(random, [0, 0.9, 0.5]),
    });
  }
  const bySubject = new Map<number, SandboxProduct[]>();
  for (const product of products.values())
    bySubject.set(product.subjectId, [...(bySubject.get(product.subjectId) ?? []), product]);
  const productSubjects = [...bySubject.keys()];

  const campaignCount = between(random, 220, 340);
  const ages = Array.from({ length: campaignCount }, () => between(random, 1, 540)).sort((a, b) => b - a);
  let advertId = between(random, 5_000_000, 15_000_000);
  const campaigns = new Map<number, SandboxCampaign>();
  for (const [index, age] of ages.entries()) {
    advertId += between(random, 1, 200);
    // The first six campaigns cover every kind and every status; the others follow realistic weights.
    const kind = KINDS[index < KIND_ORDER.length ? KIND_ORDER[index]! : weighted(random, KIND_WEIGHTS)]!;
    const status = index < STATUS_CODES.length ? STATUS_CODES[index]! : weighted(random, STATUS_WEIGHTS);
    const subjectId = pick(random, productSubjects);
    const candidates = bySubject.get(subjectId)!;
    const nms = [
      ...new Set(Array.from({ length: between(random, 1, 4) }, () => pick(random, candidates).nmId)),
    ].sort((a, b) => a - b);
    const createTime = dayStart(today) - age * DAY_MS + between(random, 0, DAY_MS - 1);
    const showing = [7, 9, 11].includes(status);
    const startDay = dayOf(createTime) + between(random, 0, Math.min(3, age - 1)) * DAY_MS;
    let endTime: number | null = null;
    let periods: SandboxCampaign['periods'] = [];
    if (status === 9) periods = [[startDay, null]];
    if (status === 11)
      periods = [[startDay, startDay + between(random, 0, (today - startDay) / DAY_MS) * DAY_MS]];
    if (status === 7) {
      const endDay = Math.min(startDay + between(random, 5, 90) * DAY_MS, today - DAY_MS);
      periods = [[startDay, Math.max(startDay, endDay)]];
      endTime = dayStart(Math.max(startDay, endDay)) + between(random, 0, DAY_MS - 1);
    }
    if (status === 8 || status === -1) endTime = createTime + between(random, 1, 72) * 3_600_000;
    const paymentType = kind.bidType === 'manual' && random() < 0.15 ? 'cpc' : 'cpm';
    const lastDay = periods.at(-1)?.[1] ?? (showing ? startDay : null);
    const lastChange = lastDay === null ? createTime : dayStart(lastDay);
    // drawn in this order, so the same seed keeps giving the same campaigns
    const changeTime = Math.max(createTime, lastChange) + between(random, 0, 3_600_000);
    const startTime = showing
      ? Math.max(createTime, dayStart(startDay) + between(random, 0, DAY_MS - 1))
      : null;
    campaigns.set(advertId, {
      advertId,
      name: `${findSubject(subjectId)!.name} — ${kind.label} ${index + 1}`,
      type: kind.type,
      bidType: kind.bidType,
      status,
      createTime,
      changeTime: endTime === null ? changeTime : Math.max(changeTime, endTime),
      startTime,
      // a campaign that ended on the day it started ends after its start
      endTime: endTime !== null && startTime !== null ? Math.max(endTime, startTime) : endTime,
      budget: status === 4 || showing ? between(random, 5, 50) * 100 : 0,
      paymentType,
      bid: paymentType === 'cpc' ? between(random, 4, 40) : between(random, 150, 900),
      subjectId,
      nms,
      periods,
      reach: between(random, 150, 4000),
      clickRatio: (between(random, 15, 70) / 10) * 0.01,
    });
  }
  return {
    seed,
    products,
    campaigns,
    balance: {
      balance: between(random, 0, 200) * 1000,
      net: between(random, 5, 150) * 1000,
      bonus: between(random, 0, 20) * 500,
    },
    nextCampaignId: advertId + 1000,
  };
}

// ---- Wire renderings ---------------------------------------------------------------------------------------

/** `deleted` of a campaign that is not deleted. */
const NOT_DELETED = '2100-01-01T00:00:00+03:00';

/** A campaign as `GET /api/advert/v2/adverts` answers it; timestamps with the marketplace's offset. */
export function renderCampaign(account: SandboxAccount, campaign: SandboxCampaign): WireCampaign {
  const manual = campaign.bidType === 'manual';
  const bid = campaign.bid * 100;
  return {
    id: campaign.advertId,
    bid_type: campaign.bidType,
    status: campaign.status,
    settings: {
      name: campaign.name,
      payment_type: campaign.paymentType,
      placements: { search: true, recommendations: !manual || campaign.advertId % 2 === 0 },
    },
    nm_settings: campaign.nms.map((nm) => {
      const subject = findSubject(account.products.get(nm)?.subjectId ?? campaign.subjectId)!;
      return {
        nm_id: nm,
        subject: { id: subject.id, name: subject.name },
        bids_kopecks: { search: bid, recommendations: manual ? Math.round(bid * 0.8) : bid },
      };
    }),
    timestamps: {
      created: marketplaceTimestamp(campaign.createTime),
      updated: marketplaceTimestamp(campaign.changeTime),
      started: campaign.startTime === null ? null : marketplaceTimestamp(campaign.startTime),
      deleted: campaign.endTime === null ? NOT_DELETED : marketplaceTimestamp(campaign.endTime),
    },
  };
}

/** Platforms of the statistics and their shares of every counter: site, Android, iOS. */
const PLATFORMS: [number, number][] = [
  [1, 0.22],
  [32, 0.48],
  [64, 0.3],
];

interface RawCounters {
  views: number;
  clicks: number;
  /** Kopecks. */
  sum: number;
  atbs: number;
  orders: number;
  shks: number;
  /** Kopecks. */
  sumPrice: number;
  /** Cancelled ordered items. */
  canceled: number;
}

const ZERO: RawCounters = {
  views: 0,
  clicks: 0,
  sum: 0,
  atbs: 0,
  orders: 0,
  shks: 0,
  sumPrice: 0,
  canceled: 0,
};

function add(a: RawCounters, b: RawCounters): RawCounters {
  return {
    views: a.views + b.views,
    clicks: a.clicks + b.clicks,
    sum: a.sum + b.sum,
    atbs: a.atbs + b.atbs,
    orders: a.orders + b.orders,
    shks: a.shks + b.shks,
    sumPrice: a.sumPrice + b.sumPrice,
    canceled: a.canceled + b.canceled,
  };
}

function counters(raw: RawCounters): WireCounters {
  return {
    views: raw.views,
    clicks: raw.clicks,
    ctr: raw.views === 0 ? 0 : round2((raw.clicks / raw.views) * 100),
    cpc: raw.clicks === 0 ? 0 : round2(raw.sum / 100 / raw.clicks),
    sum: raw.sum / 100,
    atbs: raw.atbs,
    orders: raw.orders,
    cr: raw.clicks === 0 ? 0 : round2((raw.orders / raw.clicks) * 100),
    shks: raw.shks,
    sum_price: raw.sumPrice / 100,
    canceled: raw.canceled,
  };
}

/** One product's counters of one day (all platforms), or undefined when it had no views. */
function productDay(
  account: SandboxAccount,
  campaign: SandboxCampaign,
  product: SandboxProduct,
  day: number,
): RawCounters | undefined {
  const random = seededRandom('statistics', account.seed, campaign.advertId, product.nmId, day);
  if (random() < 0.08) return undefined;
  const weekday = new Date(day).getUTCDay();
  const weekend = weekday === 0 || weekday === 6 ? 1.15 : 1;
  const views = Math.round(campaign.reach * weekend * (0.6 + random() * 0.8));
  if (views === 0) return undefined;
  const clicks = Math.min(views, Math.round(views * campaign.clickRatio * (0.8 + random() * 0.4)));
  const atbs = Math.round(clicks * (0.06 + random() * 0.08));
  const orders = Math.min(clicks, Math.round(clicks * (0.02 + random() * 0.04)));
  const shks = orders + (orders > 0 && random() < 0.2 ? between(random, 1, Math.ceil(orders / 3)) : 0);
  const priceKopecks = Math.round(product.price * 100);
  const sum =
    campaign.paymentType === 'cpc' ? clicks * campaign.bid * 100 : Math.round((views * campaign.bid) / 10);
  const canceled = shks > 0 && random() < 0.1 ? 1 : 0;
  return { views, clicks, sum, atbs, orders, shks, sumPrice: shks * priceKopecks, canceled };
}

/**
 * `total` split by `shares`, each part at most its cap; the remainder goes to the last parts with room
 * (`total` never exceeds the caps' sum here).
 */
function allocate(total: number, shares: number[], caps?: number[]): number[] {
  const parts = shares.map((share, index) => Math.min(Math.floor(total * share), caps?.[index] ?? Infinity));
  let rest = total - parts.reduce((sum, part) => sum + part, 0);
  for (let index = parts.length - 1; rest > 0 && index >= 0; index -= 1) {
    const added = Math.min((caps?.[index] ?? Infinity) - parts[index]!, rest);
    parts[index]! += added;
    rest -= added;
  }
  return parts;
}

/**
 * `raw` split over the platforms with every relation kept per platform (clicks ≤ views, orders ≤ clicks,
 * ordered items ≥ orders, orders amount = ordered items × price) and the sums unchanged.
 */
function splitOverPlatforms(raw: RawCounters, priceKopecks: number): [number, RawCounters][] {
  const shares = PLATFORMS.map(([, share]) => share);
  const views = allocate(raw.views, shares);
  const clicks = allocate(raw.clicks, shares, views);
  const orders = allocate(raw.orders, shares, clicks);
  const extraItems = allocate(raw.shks - raw.orders, shares);
  const atbs = allocate(raw.atbs, shares);
  const sum = allocate(raw.sum, shares);
  const items = orders.map((count, index) => count + extraItems[index]!);
  const canceled = allocate(raw.canceled, shares, items);
  return PLATFORMS.map(([appType], index): [number, RawCounters] => {
    const shks = items[index]!;
    return [
      appType,
      {
        views: views[index]!,
        clicks: clicks[index]!,
        sum: sum[index]!,
        atbs: atbs[index]!,
        orders: orders[index]!,
        shks,
        sumPrice: shks * priceKopecks,
        canceled: canceled[index]!,
      },
    ];
  });
}

/** Is `day` within one of the campaign's showing periods and the kept window ending `today`? */
function showingOn(campaign: SandboxCampaign, day: number, today: number): boolean {
  if (day > today || day <= today - STATISTICS_DAYS * DAY_MS) return false;
  return campaign.periods.some(([from, to]) => day >= from && day <= (to ?? today));
}

/** A marketplace day (`dayOf`) as `YYYY-MM-DD`. */
const dateOf = (day: number) => new Date(day).toISOString().slice(0, 10);

/**
 * Statistics of one campaign over the marketplace days `begin..end` (`dayOf`) as `GET /adv/v3/fullstats`
 * answers them, or undefined for a campaign that has none (only statuses 7, 9 and 11 have statistics).
 */
export function renderStatistics(
  account: SandboxAccount,
  campaign: SandboxCampaign,
  begin: number,
  end: number,
  now = Date.now(),
): WireCampaignStatistics | undefined {
  if (!STATUS_CODES_WITH_STATISTICS.includes(campaign.status)) return undefined;
  const today = dayOf(now);
  const days: WireDayCounters[] = [];
  const booster: NonNullable<WireCampaignStatistics['boosterStats']> = [];
  let total = ZERO;
  for (let day = begin; day <= end; day += DAY_MS) {
    if (!showingOn(campaign, day, today)) continue;
    const platforms = new Map<number, { raw: RawCounters; nms: WireProductCounters[] }>();
    let dayTotal = ZERO;
    for (const nmId of campaign.nms) {
      const product = account.products.get(nmId);
      const raw = product && productDay(account, campaign, product, day);
      if (!product || !raw) continue;
      dayTotal = add(dayTotal, raw);
      for (const [appType, piece] of splitOverPlatforms(raw, Math.round(product.price * 100))) {
        const platform = platforms.get(appType) ?? { raw: ZERO, nms: [] };
        platform.raw = add(platform.raw, piece);
        platform.nms.push({ ...counters(piece), nmId, name: product.name });
        platforms.set(appType, platform);
      }
      if (campaign.bidType === 'unified')
        booster.push({
          date: dateOf(day),
          nm: nmId,
          avg_position: 1 + Math.floor((dayTotal.views % 97) / 2),
        });
    }
    if (dayTotal.views === 0) continue;
    total = add(total, dayTotal);
    days.push({
      ...counters(dayTotal),
      // the marketplace writes its calendar day as midnight UTC
      date: `${dateOf(day)}T00:00:00Z`,
      apps: [...platforms.entries()].map(([appType, platform]) => ({
        ...counters(platform.raw),
        appType,
        nms: platform.nms,
      })),
    });
  }
  return {
    ...counters(total),
    advertId: campaign.advertId,
    days,
    boosterStats: booster,
  };
}
