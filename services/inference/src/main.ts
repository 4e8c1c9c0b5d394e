import { runMain } from '@vision/shared';
import { start } from './index';

runMain('inference', start);
